"""Creates the fastapi-users peer's database afresh: deletes the SQLite file (and -wal/-shm) or
drops and recreates the PostgreSQL database named in PEER_DB, then creates the tables."""

import asyncio
import os
import sys

import peerdb


async def main() -> None:
    db = peerdb.from_env()
    if db.kind == "sqlite":
        os.makedirs(os.path.dirname(db.path), exist_ok=True)
        for suffix in ("", "-wal", "-shm", "-journal"):
            try:
                os.remove(db.path + suffix)
            except FileNotFoundError:
                pass
    else:
        import asyncpg

        admin = sys.argv[1] if len(sys.argv) > 1 else db.with_name("postgres")
        conn = await asyncpg.connect(admin)
        try:
            name = '"' + db.name.replace('"', '""') + '"'
            await conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            await conn.execute(f"CREATE DATABASE {name}")
        finally:
            await conn.close()

    import app  # noqa: PLC0415 (needs PEER_DB)
    from sqlalchemy import text

    async with app.engine.begin() as conn:
        await conn.run_sync(app.Base.metadata.create_all)
        if db.kind == "sqlite":
            mode = (await conn.execute(text("PRAGMA journal_mode"))).scalar_one()
            if mode.lower() != "wal":
                sys.exit(f"resetdb: SQLite journal_mode is {mode}, expected wal")
    await app.engine.dispose()


if __name__ == "__main__":
    asyncio.run(main())
