"""Creates the allauth peer's database afresh: deletes the SQLite file (and -wal/-shm) or drops
and recreates the PostgreSQL database named in PEER_DB, then runs Django's migrations."""

import os
import sys

import peerdb


def main() -> None:
    db = peerdb.from_env()
    if db.kind == "sqlite":
        os.makedirs(os.path.dirname(db.path), exist_ok=True)
        for suffix in ("", "-wal", "-shm", "-journal"):
            try:
                os.remove(db.path + suffix)
            except FileNotFoundError:
                pass
    else:
        import psycopg
        from psycopg import sql

        admin = sys.argv[1] if len(sys.argv) > 1 else db.with_name("postgres")
        with psycopg.connect(admin, autocommit=True) as conn:
            name = sql.Identifier(db.name)
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(name))
            conn.execute(sql.SQL("CREATE DATABASE {}").format(name))

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchsite.settings")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", interactive=False, verbosity=0)
    if db.kind == "sqlite":
        from django.db import connection

        with connection.cursor() as cursor:
            cursor.execute("PRAGMA journal_mode")
            mode = cursor.fetchone()[0]
        if mode.lower() != "wal":
            sys.exit(f"resetdb: SQLite journal_mode is {mode}, expected wal")


if __name__ == "__main__":
    main()
