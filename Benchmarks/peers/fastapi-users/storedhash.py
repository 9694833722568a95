"""Prints the stored password hash of the user with the given email (used by `peer.sh prepare`
to check the bcrypt cost)."""

import asyncio
import sys

from sqlalchemy import func, select

import app


async def main() -> None:
    async with app.session_maker() as session:
        row = await session.execute(
            select(app.User.hashed_password).where(func.lower(app.User.email) == sys.argv[1].lower())
        )
        print(row.scalar_one())
    await app.engine.dispose()


asyncio.run(main())
