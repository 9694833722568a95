"""Mixed-load soak: for SOAK_SECONDS (600 by default) on one engine, workers keep up a mix of
  - password logins (`POST /v1/sessions`) and authenticated reads (`GET /v1/me`, `GET /api/users/user`),
  - code requests (`POST /v1/signup/code` to fresh addresses; the harness raises the per-address budget),
  - WebSocket gateway logins on long-lived connections (`LOGIN_CUSTOMER`, a few frames per connection, then a new
    connection),
while, on PostgreSQL, the database is restarted every RESTART_EVERY_S seconds (alternating `pg_ctl stop -m fast` and
`-m immediate`, down for OUTAGE_S). SQLite is embedded: it has nothing to restart.

Pass: every request got an answer (errors are fine while the database is away; no request may stay unanswered
for HANG_S), the server process is the one started at the beginning, and at the end `/health` is 200 and a fresh
login over HTTP and over the gateway both work within 10 s. Prints the counts by kind and outcome.
"""
from __future__ import annotations

import asyncio
import base64
import json
import os
import random
import struct
from collections import Counter

from common import Checker, FaultsPostgres, Gatehouse, Hang, NoAnswer, NotSent, Result, http, log, now, outbox_code, workdir

HANG_S = 20.0
OUTAGE_S = 5.0
# SOAK_RESTART_EVERY_SECONDS=0: no restarts. A restart must start 2 * OUTAGE_S before the end, so a soak asked to
# restart whose SOAK_SECONDS leaves no room for one fails rather than soaking without it.
RESTART_EVERY_S = float(os.environ.get("SOAK_RESTART_EVERY_SECONDS", "60"))
WORKERS = 6
GATEWAY_WORKERS = 3


class GatewayConnection:
    """A WebSocket client of the gateway, standard library only: masked text frames out, frames in."""

    def __init__(self, reader, writer):
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, port: int) -> "GatewayConnection":
        reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), HANG_S)
        key = base64.b64encode(os.urandom(16)).decode()
        writer.write((f"GET /customer-gateway/customer HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                      f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        await writer.drain()
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HANG_S)
        if b" 101 " not in head.split(b"\r\n", 1)[0] + b" ":
            writer.close()
            raise NoAnswer(f"upgrade refused: {head[:40]!r}")
        return cls(reader, writer)

    async def send_text(self, text: str) -> None:
        payload = text.encode()
        mask = os.urandom(4)
        header = bytes([0x81])
        header += bytes([0x80 | len(payload)]) if len(payload) < 126 else bytes([0x80 | 126]) + struct.pack("!H", len(payload))
        self.writer.write(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))
        await self.writer.drain()

    async def receive(self) -> tuple[int, bytes]:
        first, second = await self.reader.readexactly(2)
        length = second & 0x7F
        if length == 126:
            length = struct.unpack("!H", await self.reader.readexactly(2))[0]
        elif length == 127:
            length = struct.unpack("!Q", await self.reader.readexactly(8))[0]
        return first & 0x0F, await self.reader.readexactly(length)

    async def request(self, text: str) -> dict:
        await self.send_text(text)
        while True:
            opcode, payload = await asyncio.wait_for(self.receive(), HANG_S)
            if opcode == 1:
                return json.loads(payload)
            if opcode == 9:   # ping: answer it
                mask = os.urandom(4)
                self.writer.write(bytes([0x8A, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))
            if opcode == 8:
                raise NoAnswer(f"closed by the server: {payload[:2].hex()}")

    def close(self) -> None:
        try:
            self.writer.close()
        except Exception:
            pass


class Soak:
    def __init__(self, port: int, accounts: list, rng: random.Random):
        self.port, self.accounts, self.rng = port, accounts, rng
        self.outcomes: Counter = Counter()
        self.hangs: list[str] = []
        self.stop = False

    def record(self, kind: str, outcome: str, detail: str = "") -> None:
        self.outcomes[(kind, outcome)] += 1
        if outcome == "hang":
            self.hangs.append(kind)
            # The request id is in the server's log line for the request, if it ever got that far.
            log(f"  HANG {kind} at {now():.1f} s: {detail}")

    async def http_worker(self, index: int) -> None:
        n = 0
        while not self.stop:
            n += 1
            account = self.accounts[(index + n) % len(self.accounts)]
            choice = n % 10
            request_id = f"soak-{index}-{n}"
            tag = {"X-Request-Id": request_id}
            kind = "login" if choice == 0 else "code" if choice == 1 else "v1-read" if choice % 2 == 0 else "api-read"
            try:
                if kind == "login":
                    answer = await http("POST", self.port, "/v1/sessions", timeout=HANG_S, headers=tag,
                                        json_body={"identifier": account["email"], "password": account["password"]})
                elif kind == "code":
                    answer = await http("POST", self.port, "/v1/signup/code", timeout=HANG_S, headers=tag,
                                        json_body={"email": f"soak{self.rng.randrange(10**9)}@example.com"})
                elif kind == "v1-read":
                    answer = await http("GET", self.port, "/v1/me", token=account["token"], timeout=HANG_S, headers=tag)
                else:
                    answer = await http("GET", self.port, "/api/users/user", token=account["token"], timeout=HANG_S, headers=tag)
                self.record(kind, str(answer.status))
            except Hang as hang:
                self.record(kind, "hang", f"{request_id} {hang}")
            except (NoAnswer, NotSent) as error:
                self.record("http", "no-answer")
            await asyncio.sleep(0.005)

    async def gateway_worker(self, index: int) -> None:
        while not self.stop:
            account = self.accounts[index % len(self.accounts)]
            try:
                connection = await GatewayConnection.open(self.port)
            except (asyncio.TimeoutError, Hang):
                self.record("gateway-open", "hang")
                continue
            except (OSError, NoAnswer, asyncio.IncompleteReadError):
                self.record("gateway-open", "refused")
                await asyncio.sleep(0.2)
                continue
            try:
                for sequence in range(20):
                    if self.stop:
                        break
                    answer = await connection.request(json.dumps({
                        "type": "LOGIN_CUSTOMER", "sequence_id": f"{index}-{sequence}",
                        "data": {"email": account["email"], "password": account["password"]}}))
                    self.record("gateway-login", answer.get("type", "?"))
            except asyncio.TimeoutError:
                self.record("gateway-login", "hang")
            except (OSError, NoAnswer, asyncio.IncompleteReadError):
                self.record("gateway-login", "connection-lost")
            finally:
                connection.close()


async def make_accounts(port: int, count: int) -> list:
    accounts = []
    for i in range(count):
        email = f"soak-{i}@example.com"
        sent = await http("POST", port, "/v1/signup/code", json_body={"email": email})
        assert sent.status == 202, sent.text()
        code = await outbox_code(port, email)
        password = f"soak-pass-{i}!"
        created = await http("POST", port, "/v1/signup", json_body={"email": email, "code": code, "password": password})
        assert created.status == 201, created.text()
        accounts.append({"email": email, "password": password, "token": created.json()["token"]})
    return accounts


async def run(engine: str, seconds: float, pg: FaultsPostgres | None, port: int) -> Result:
    check = Checker(f"soak-{engine}")
    rng = random.Random(int(os.environ.get("FAULTS_SEED", "1")))
    work = workdir(f"soak-{engine}")
    database = f"faults_soak_{os.getpid()}"
    if engine == "pg":
        database_url = pg.create_database(database)
    else:
        database_url = os.path.join(work, "soak.sqlite")
    # Limits raised so the load reaches the code paths instead of the throttles.
    server = Gatehouse(f"soak-{engine}", port, database_url, work, extra_env={
        "GATEHOUSE_BCRYPT_COST": "4", "GATEHOUSE_LOGIN_FAILURES_PER_ACCOUNT": "10000",
        "GATEHOUSE_LOGIN_FAILURES_PER_IP": "1000000", "GATEHOUSE_DB_POOL_TIMEOUT_SECONDS": "3",
        # `info` logs every request with its id (about 100 bytes each), to find a hang's request.
        "GATEHOUSE_LOG_LEVEL": os.environ.get("SOAK_LOG_LEVEL", "warning"),
    })
    await server.start()
    pid = server.pid
    try:
        accounts = await make_accounts(port, 8)
        soak = Soak(port, accounts, rng)
        tasks = [asyncio.create_task(soak.http_worker(i)) for i in range(WORKERS)]
        tasks += [asyncio.create_task(soak.gateway_worker(i)) for i in range(GATEWAY_WORKERS)]
        started = now()
        restarts = 0
        next_restart = started + RESTART_EVERY_S
        while now() - started < seconds:
            await asyncio.sleep(1)
            check.expect(server.alive(), "the server process died")
            if engine == "pg" and RESTART_EVERY_S > 0 and now() >= next_restart and now() - started < seconds - 2 * OUTAGE_S:
                mode = "fast" if restarts % 2 == 0 else "immediate"
                await asyncio.to_thread(pg.stop, mode)
                await asyncio.sleep(OUTAGE_S)
                await asyncio.to_thread(pg.start)
                restarts += 1
                next_restart = now() + RESTART_EVERY_S
        soak.stop = True
        await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), HANG_S + 5)
        if engine == "pg" and RESTART_EVERY_S > 0:
            check.expect(restarts >= 1, f"no PostgreSQL restart happened: a {seconds:.0f} s soak has no room for one every "
                                        f"{RESTART_EVERY_S:.0f} s (the last may start {2 * OUTAGE_S:.0f} s before the end)")

        # Still responsive: health, a fresh login over HTTP and over the gateway, within 10 s.
        deadline = now() + 10
        healthy = login_ok = gateway_ok = False
        while now() < deadline and not (healthy and login_ok and gateway_ok):
            try:
                healthy = healthy or (await http("GET", port, "/health", timeout=5)).status == 200
                login_ok = login_ok or (await http("POST", port, "/v1/sessions", timeout=5, json_body={
                    "identifier": accounts[0]["email"], "password": accounts[0]["password"]})).status == 201
                if not gateway_ok:
                    connection = await GatewayConnection.open(port)
                    answer = await connection.request(json.dumps({"type": "LOGIN_CUSTOMER", "sequence_id": "final", "data": {
                        "email": accounts[0]["email"], "password": accounts[0]["password"]}}))
                    connection.close()
                    gateway_ok = answer.get("type") == "CUSTOMER_API_TOKEN"
            except Exception:
                await asyncio.sleep(0.5)
        check.expect(healthy, "/health is not 200 at the end")
        check.expect(login_ok, "a fresh login over HTTP fails at the end")
        check.expect(gateway_ok, "a fresh gateway login fails at the end")
        check.expect(not soak.hangs, f"{len(soak.hangs)} requests never answered: {Counter(soak.hangs)}")
        check.expect(server.pid == pid and server.alive(), "the server is not the process started at the beginning")
        total = sum(soak.outcomes.values())
        check.figures.update({"seconds": int(seconds), "requests": total, "restarts": restarts,
                              "per_second": round(total / seconds)})
        for (kind, outcome), count in sorted(soak.outcomes.items()):
            log(f"  {engine} {kind:14} {outcome:20} {count}")
    finally:
        server.stop()
        if engine == "pg":
            pg.drop_database(database)
    return check.result()
