"""Reads the peer's database from the environment (stdlib only).

PEER_DB is either `sqlite:/abs/path/file.sqlite` (also `sqlite:///abs/path`) or a PostgreSQL URL
(`postgres://user[:password]@host:port/dbname[?query]`, `postgresql://` works too). peer.sh has
already replaced the database name of a PostgreSQL URL by the peer's own database
(bench_allauth / bench_fastapi).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit, urlunsplit

SQLITE_BUSY_TIMEOUT_MS = 5000  # same PRAGMAs as Gatehouse's SQLite provider
SQLITE_PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}",
    "PRAGMA synchronous=NORMAL",
)


@dataclass
class PeerDB:
    kind: str  # "sqlite" or "postgres"
    path: str = ""  # sqlite
    url: str = ""  # postgres, as given (postgres://...)
    user: str = ""
    password: str = ""
    host: str = ""
    port: int = 5432
    name: str = ""
    query: str = ""

    def with_name(self, name: str) -> str:
        parts = urlsplit(self.url)
        return urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, ""))


def parse(value: str) -> PeerDB:
    if value.startswith("sqlite:"):
        path = value[len("sqlite:"):]
        if path.startswith("///"):
            path = path[2:]
        if not os.path.isabs(path):
            raise ValueError(f"sqlite path must be absolute: {value!r}")
        return PeerDB(kind="sqlite", path=path)
    if value.startswith(("postgres://", "postgresql://")):
        parts = urlsplit(value)
        return PeerDB(
            kind="postgres",
            url=value,
            user=unquote(parts.username or "postgres"),
            password=unquote(parts.password or ""),
            host=parts.hostname or "127.0.0.1",
            port=parts.port or 5432,
            name=parts.path.lstrip("/") or "postgres",
            query=parts.query,
        )
    raise ValueError(f"unsupported database {value!r} (want sqlite:/abs/path or postgres://...)")


def from_env() -> PeerDB:
    value = os.environ.get("PEER_DB")
    if not value:
        raise RuntimeError("PEER_DB is not set")
    return parse(value)


def bcrypt_cost() -> int:
    cost = int(os.environ.get("BCRYPT_COST", "10"))
    if not 4 <= cost <= 31:
        raise ValueError(f"BCRYPT_COST out of range: {cost}")
    return cost
