"""The fleet under load, losing its parts one after another (docs/deploy.md, "Past one machine"; the fleet in
Faults/fleet.py): three instances behind HAProxy, PgBouncer in transaction mode, a Redis event bus, a PostgreSQL
primary with a synchronous streaming standby that also serves reads.

Under steady load through the balancer (the ledger checker's clients moving money, senders writing numbered messages
into their chats, each reader holding a realtime socket, and a probe writing every 50 ms), in turn:

  drain        SIGTERM to one instance (it finishes what it has), started again
  kill         kill -9 of another instance, started again
  redis        Redis killed and started again (the instances' bus reconnects through a gap)
  standby      the standby stopped at once and started again (reads go to the primary; writes wait for it)
  pgbouncer    PgBouncer killed and started again
  failover     the primary lost (immediate shutdown), the standby promoted, the primary's address moved to it

Then the checks of the ledger checker (Faults/test_ledger.py) and of the messages test (Faults/test_messages.py) on
the final primary: no acknowledged transfer or message lost or applied twice, money conserved, every event sequence
gap-free; and every reader's socket, reconnected with `?since=` after each loss, saw its account's events 1 by 1 to
the last one, none missed or twice. Figures: for each fault, the longest the probe waited for an answered write and
how many of its writes failed.
"""
from __future__ import annotations

import asyncio
import base64
import json
import os
import random
import struct

import test_ledger
import test_messages
from common import Checker, Gatehouse, Inspector, NoAnswer, Result, http, log, now, workdir
from fleet import BALANCER, Fleet, disruption, probe

SENDERS = int(os.environ.get("FLEET_SENDERS", "8"))
CLIENTS = int(os.environ.get("FLEET_LEDGER_CLIENTS", "24"))
ACCOUNTS = int(os.environ.get("FLEET_LEDGER_ACCOUNTS", "40"))
# Seconds of steady load before the first fault and between two.
STEADY_S = float(os.environ.get("FLEET_STEADY_SECONDS", "4"))
ENV = {**test_ledger.LIMITS, "GATEHOUSE_PUSH_COALESCE_SECONDS": "0", "GATEHOUSE_ENV": "development",
       "GATEHOUSE_REPLICA_MAX_LAG_SECONDS": "1", "GATEHOUSE_DB_POOL_SIZE": "4"}


class NodeInspector(Inspector):
    """The checks' SQL on whichever node is the primary at the end."""

    def __init__(self, fleet: Fleet):
        super().__init__("pg")
        self.fleet = fleet

    def rows(self, sql: str) -> list[list[str]]:
        return self.fleet.primary.psql(sql)


class Listener:
    """A reader's realtime socket through the balancer (`GET /v1/realtime`, Bearer on the upgrade), reconnected with
    `?since=` the last number it saw whenever it is lost. Keeps every number in the order it came."""

    def __init__(self, token: str):
        self.token = token
        self.last: int | None = None
        self.seen: list[int] = []
        self.problems: list[str] = []
        self.connects = 0
        self.instances: list[str] = []   # the instance behind each connection, in order
        self.stop = False

    async def run(self) -> None:
        while not self.stop:
            try:
                await self.session()
            except (OSError, asyncio.IncompleteReadError, asyncio.TimeoutError, NoAnswer, ValueError):
                pass
            if not self.stop:
                await asyncio.sleep(0.1)

    async def session(self) -> None:
        reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", BALANCER), 5)
        try:
            query = "" if self.last is None else f"?since={self.last}"
            key = base64.b64encode(os.urandom(16)).decode()
            writer.write((f"GET /v1/realtime{query} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                          f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer {self.token}\r\n\r\n").encode())
            await writer.drain()
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
            if b" 101 " not in head.split(b"\r\n", 1)[0] + b" ":
                raise NoAnswer(f"upgrade refused: {head[:60]!r}")
            self.connects += 1
            served = [line.split(b":", 1)[1].strip().decode() for line in head.split(b"\r\n") if line.lower().startswith(b"x-served-by:")]
            self.instances.append(served[0] if served else "?")
            while not self.stop:
                try:
                    first, second = await asyncio.wait_for(reader.readexactly(2), 1)
                except asyncio.TimeoutError:
                    continue
                length = second & 0x7F
                if length == 126:
                    length = struct.unpack("!H", await reader.readexactly(2))[0]
                elif length == 127:
                    length = struct.unpack("!Q", await reader.readexactly(8))[0]
                payload = await reader.readexactly(length)
                opcode = first & 0x0F
                if opcode == 8:
                    return
                if opcode == 9:
                    mask = os.urandom(4)
                    writer.write(bytes([0x8A, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))
                    continue
                if opcode != 1:
                    continue
                frame = json.loads(payload)
                kind, seq = frame.get("type"), frame.get("seq")
                if kind == "ready":
                    if self.last is None:
                        self.last = seq
                    elif seq < self.last:
                        self.problems.append(f"ready at {seq} after {self.last} was seen")
                elif kind == "resync":
                    self.problems.append(f"resync to {seq} after {self.last}: events were not kept")
                    self.last = seq
                elif isinstance(seq, int):
                    if seq != (self.last or 0) + 1:
                        self.problems.append(f"{seq} after {self.last}")
                    self.seen.append(seq)
                    self.last = max(self.last or 0, seq)
        finally:
            writer.close()


async def run(seed: int) -> Result:
    check = Checker("fleet[pg]")
    rng = random.Random(seed)
    work = workdir("faults-fleet")
    fleet = Fleet(work, ENV)
    # The ledger's operator commands and reads go through what a client and an operator use: the balancer, the fleet's database.
    front = Gatehouse("front", BALANCER, fleet.env["DATABASE_URL"], work, extra_env={**ENV, **fleet.env})
    tasks: list[asyncio.Task] = []
    try:
        t0 = now()
        await fleet.start()
        log(f"  fleet up in {now() - t0:.1f}s: 3 instances behind HAProxy, PgBouncer, Redis, PostgreSQL primary and synchronous standby")
        accounts, credited_total = await test_ledger.prepare(front, ACCOUNTS)
        authors, readers, chats = [], [], []
        for index in range(SENDERS):
            author = await test_messages.sign_up(BALANCER, f"author{index}x")
            reader = await test_messages.sign_up(BALANCER, f"reader{index}x")
            if index in test_messages.WITH_DEVICE:
                device = await http("POST", BALANCER, "/v1/me/devices", json_body={"platform": "fcm", "token": f"reader-{index}"},
                                    token=reader["token"])
                assert device.status == 201, device.text
            answer = await http("POST", BALANCER, "/v1/chats", json_body={"personId": reader["id"]}, token=author["token"])
            assert answer.status == 200, answer.text
            authors.append(author)
            readers.append(reader)
            chats.append(answer.json()["id"])
        prober = await test_messages.sign_up(BALANCER, "probe")

        listeners = [Listener(r["token"]) for r in readers]
        tasks += [asyncio.create_task(listener.run()) for listener in listeners]
        deadline = now() + 20
        while any(listener.last is None for listener in listeners) and now() < deadline:
            await asyncio.sleep(0.05)
        check.expect(all(listener.last is not None for listener in listeners), "a reader's socket never opened")

        budget = [10**9]
        clients = [test_ledger.Client(i, accounts, front, budget, random.Random(rng.random())) for i in range(CLIENTS)]
        senders = [test_messages.Sender(i, authors[i], chats[i], front) for i in range(SENDERS)]
        stop_probe, samples = [False], []
        loads = [asyncio.create_task(c.run()) for c in clients] + [asyncio.create_task(s.run()) for s in senders]
        probing = asyncio.create_task(probe(BALANCER, prober["token"], stop_probe, samples))
        started = now()
        loop = asyncio.get_running_loop()
        costs: dict[str, tuple[float, float]] = {}

        async def fault(name: str, action) -> None:
            await asyncio.sleep(STEADY_S)
            at = now()
            took = await action()
            costs[name] = (at, took if took is not None else now() - at)
            log(f"  {name} at {at - started:.1f}s")

        async def drain():
            instance = fleet.instances[1]
            await loop.run_in_executor(None, instance.stop)
            await instance.start(ready_timeout=60)
            await fleet.wait_balanced()

        async def kill():
            instance = fleet.instances[0]
            instance.kill9()
            await asyncio.sleep(1)
            await instance.start(ready_timeout=60)
            await fleet.wait_balanced()

        async def redis():
            await loop.run_in_executor(None, fleet.restart_redis, 1.0)

        async def standby():
            await loop.run_in_executor(None, fleet.standby.stop, "immediate")
            await asyncio.sleep(2)
            await loop.run_in_executor(None, fleet.start_standby)

        async def pgbouncer():
            await loop.run_in_executor(None, fleet.restart_pgbouncer, 1.0)

        async def failover():
            return await loop.run_in_executor(None, fleet.failover)

        for name, action in (("drain", drain), ("kill", kill), ("redis", redis), ("standby", standby),
                             ("pgbouncer", pgbouncer), ("failover", failover)):
            await fault(name, action)
        await asyncio.sleep(STEADY_S)
        ops = 10**9 - budget[0]
        budget[0] = 0
        for sender in senders:
            sender.stop = True
        await asyncio.gather(*loads)
        stop_probe[0] = True
        await probing
        took = now() - started
        # The last events reach the sockets, then they stop.
        await asyncio.sleep(2)
        for listener in listeners:
            listener.stop = True
        await asyncio.gather(*tasks)
        tasks = []

        marks = sorted(at for at, _ in costs.values()) + [now()]
        names = sorted(costs, key=lambda n: costs[n][0])
        for name, until in zip(names, marks[1:]):
            at, action_s = costs[name]
            longest, failed = disruption(samples, at, until)
            check.figures[name] = f"{longest * 1000:.0f}ms/{failed}"
            log(f"  {name}: the fault took {action_s:.1f}s; the probe's longest wait for an answered write {longest * 1000:.0f} ms, "
                f"{failed} of its writes failed")
        calm, _ = disruption(samples, started, costs[names[0]][0])
        check.figures["calm"] = f"{calm * 1000:.0f}ms"

        log(f"  the readers' sockets, on the instances g1..g3 (again after each loss): {[' '.join(listener.instances) for listener in listeners]}")
        inspector = NodeInspector(fleet)
        total = sum(len(s.answered) for s in senders)
        log(f"  {total} messages by {SENDERS} senders, {ops} ledger operations by {CLIENTS} clients in {took:.1f}s")
        check.expect(total > 0, "no message was answered: the load did not run")
        await test_ledger.verify(check, front, inspector, accounts, credited_total, clients, ops, took, names, rng)
        messages, pushes = await test_messages.verify(check, senders, readers, inspector, BALANCER, every_push=False)

        # Every socket saw its account's events one by one to the last, across every loss.
        for index, (listener, reader) in enumerate(zip(listeners, readers)):
            newest = int(inspector.scalar(f"SELECT COALESCE(max(seq), 0) FROM messenger_events WHERE account_id = '{reader['id']}'"))
            for problem in listener.problems[:3]:
                check.expect(False, f"reader {index}'s socket: {problem}")
            check.expect(listener.last == newest, f"reader {index}'s socket ended at {listener.last}, its account's events at {newest}")
            check.expect(len(listener.seen) == len(set(listener.seen)), f"reader {index}'s socket saw an event twice")
        check.figures.update({"messages": messages, "pushes": pushes, "reconnects": sum(max(0, l.connects - 1) for l in listeners),
                              "took_load_s": f"{took:.0f}"})
    except Exception as error:
        check.expect(False, f"harness error: {type(error).__name__}: {error}")
    finally:
        for task in tasks:
            task.cancel()
        fleet.stop()
        if not check.problems:
            fleet.remove()
    return check.result()
