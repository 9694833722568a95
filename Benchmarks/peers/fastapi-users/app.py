"""fastapi-users peer for the Gatehouse benchmark (benchmark only, never a deployment).

Database token strategy (DatabaseStrategy + SQLAlchemyAccessTokenDatabase), bearer transport,
async SQLAlchemy on aiosqlite or asyncpg, bcrypt via pwdlib at BCRYPT_COST (default 10).
Routes: POST /auth/register, POST /auth/db/login (form username/password), GET /users/me.
Configured from the environment by peer.sh: PEER_DB, BCRYPT_COST.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI
from fastapi_users import BaseUserManager, FastAPIUsers, UUIDIDMixin, schemas
from fastapi_users.authentication import AuthenticationBackend, BearerTransport
from fastapi_users.authentication.strategy.db import AccessTokenDatabase, DatabaseStrategy
from fastapi_users.password import PasswordHelper
from fastapi_users_db_sqlalchemy import SQLAlchemyBaseUserTableUUID, SQLAlchemyUserDatabase
from fastapi_users_db_sqlalchemy.access_token import (
    SQLAlchemyAccessTokenDatabase,
    SQLAlchemyBaseAccessTokenTableUUID,
)
from pwdlib import PasswordHash
from pwdlib.hashers.bcrypt import BcryptHasher
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.orm import DeclarativeBase

import peerdb

DB = peerdb.from_env()
BCRYPT_COST = peerdb.bcrypt_cost()
TOKEN_LIFETIME_SECONDS = 24 * 3600
SECRET = "gatehouse-benchmark-peer-not-a-secret"


def database_url() -> str:
    if DB.kind == "sqlite":
        return f"sqlite+aiosqlite:///{DB.path}"
    auth = DB.user + (f":{DB.password}" if DB.password else "")
    return f"postgresql+asyncpg://{auth}@{DB.host}:{DB.port}/{DB.name}"


if DB.kind == "sqlite":
    engine = create_async_engine(database_url(), connect_args={"timeout": peerdb.SQLITE_BUSY_TIMEOUT_MS / 1000})

    @event.listens_for(engine.sync_engine, "connect")
    def _sqlite_pragmas(dbapi_connection, _record) -> None:  # same PRAGMAs as Gatehouse
        cursor = dbapi_connection.cursor()
        for pragma in peerdb.SQLITE_PRAGMAS:
            cursor.execute(pragma)
        cursor.close()
else:
    engine = create_async_engine(database_url(), pool_size=10, max_overflow=10)

session_maker = async_sessionmaker(engine, expire_on_commit=False)


class Base(DeclarativeBase):
    pass


class User(SQLAlchemyBaseUserTableUUID, Base):
    pass


class AccessToken(SQLAlchemyBaseAccessTokenTableUUID, Base):
    pass


class UserRead(schemas.BaseUser[uuid.UUID]):
    pass


class UserCreate(schemas.BaseUserCreate):
    pass


class UserUpdate(schemas.BaseUserUpdate):
    pass


password_helper = PasswordHelper(PasswordHash((BcryptHasher(rounds=BCRYPT_COST),)))


async def get_async_session() -> AsyncGenerator[AsyncSession, None]:
    async with session_maker() as session:
        yield session


async def get_user_db(session: AsyncSession = Depends(get_async_session)):
    yield SQLAlchemyUserDatabase(session, User)


async def get_access_token_db(session: AsyncSession = Depends(get_async_session)):
    yield SQLAlchemyAccessTokenDatabase(session, AccessToken)


class UserManager(UUIDIDMixin, BaseUserManager[User, uuid.UUID]):
    reset_password_token_secret = SECRET
    verification_token_secret = SECRET


async def get_user_manager(user_db: SQLAlchemyUserDatabase = Depends(get_user_db)):
    yield UserManager(user_db, password_helper)


def get_database_strategy(
    access_token_db: AccessTokenDatabase[AccessToken] = Depends(get_access_token_db),
) -> DatabaseStrategy:
    return DatabaseStrategy(access_token_db, lifetime_seconds=TOKEN_LIFETIME_SECONDS)


auth_backend = AuthenticationBackend(
    name="db",
    transport=BearerTransport(tokenUrl="auth/db/login"),
    get_strategy=get_database_strategy,
)

fastapi_users = FastAPIUsers[User, uuid.UUID](get_user_manager, [auth_backend])



@asynccontextmanager
async def lifespan(_app: FastAPI) -> AsyncGenerator[None, None]:
    yield
    await engine.dispose()


app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan)
app.include_router(fastapi_users.get_auth_router(auth_backend), prefix="/auth/db", tags=["auth"])
app.include_router(fastapi_users.get_register_router(UserRead, UserCreate), prefix="/auth", tags=["auth"])
app.include_router(fastapi_users.get_users_router(UserRead, UserUpdate), prefix="/users", tags=["users"])
