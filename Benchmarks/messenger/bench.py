#!/usr/bin/env python3
"""Messenger benchmark: Gatehouse against Matrix Synapse, measured by the same client in one run.

For one server already running (`--target gatehouse|synapse --url URL`):

  1. send throughput: wrk with 64 connections sending messages into 64 one-to-one chats
     (Gatehouse `POST /v1/chats/{id}/messages`; Synapse `PUT .../send/m.room.message/{txnId}`);
  2. delivery latency: 100 active pairs, each sending one message per `--interval` seconds,
     timed from just before the send request to the recipient's realtime event (Gatehouse: its
     `/v1/realtime` socket; Synapse: its `/sync` long-poll), with `--idle` idle clients connected
     meanwhile (Gatehouse: sockets; Synapse: `/sync` long-polls);
  3. memory per idle realtime connection: the server's RSS with the idle clients connected minus
     before, divided by their number.

Prints one `RESULT {json}` line. Benchmarks/messenger/run.sh starts the servers and prints the ratios.
"""
from __future__ import annotations

import argparse
import asyncio
import hashlib
import hmac
import json
import os
import statistics
import subprocess
import sys
import time
import uuid

import aiohttp
import websockets

PAIRS = 100
SENDERS = 64
IDLE_USERS = 100


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(p / 100 * len(ordered))) - 1))]


async def gather_limited(factories, limit: int = 16):
    semaphore = asyncio.Semaphore(limit)

    async def run(factory):
        async with semaphore:
            return await factory()

    return await asyncio.gather(*(run(f) for f in factories))


# MARK: - Gatehouse

class Gatehouse:
    def __init__(self, url: str, session: aiohttp.ClientSession):
        self.url = url
        self.http = session

    async def user(self, name: str) -> dict:
        email = f"{name}@bench.example"
        async with self.http.post(f"{self.url}/v1/signup/code", json={"email": email}) as r:
            assert r.status == 202, await r.text()
        async with self.http.get(f"{self.url}/dev/outbox", params={"to": email}) as r:
            code = (await r.json())[0]["code"]
        body = {"email": email, "code": code, "password": "bench-pass-1", "tag": name, "firstName": name}
        async with self.http.post(f"{self.url}/v1/signup", json=body) as r:
            assert r.status == 201, await r.text()
            session = await r.json()
        return {"token": session["token"], "id": session["account"]["id"], "name": name}

    async def pair(self, a: dict, b: dict) -> str:
        async with self.http.post(f"{self.url}/v1/chats", json={"personId": b["id"]}, headers=self.auth(a)) as r:
            assert r.status == 200, await r.text()
            return (await r.json())["id"]

    async def device(self, user: dict) -> None:
        body = {"platform": "fcm", "token": f"bench-{user['name']}", "language": "en"}
        async with self.http.post(f"{self.url}/v1/me/devices", json=body, headers=self.auth(user)) as r:
            assert r.status in (200, 201), await r.text()

    @staticmethod
    def auth(user: dict) -> dict:
        return {"Authorization": f"Bearer {user['token']}"}

    def send_target(self, user: dict, room: str) -> str:
        return f"POST\t/v1/chats/{room}/messages\t{user['token']}"

    send_body = '{"text":"bench message {cid}","clientMessageId":"{cid}"}'

    async def send(self, user: dict, room: str, text: str) -> None:
        body = {"text": text, "clientMessageId": uuid.uuid4().hex}
        async with self.http.post(f"{self.url}/v1/chats/{room}/messages", json=body, headers=self.auth(user)) as r:
            if r.status != 201:
                raise RuntimeError(f"send: {r.status} {await r.text()}")

    async def listen(self, user: dict, on_text, ready: asyncio.Event, stop: asyncio.Event) -> None:
        """The recipient's realtime socket: calls on_text(text) for each message.created."""
        ws_url = self.url.replace("http://", "ws://") + "/v1/realtime"
        async with websockets.connect(ws_url, additional_headers=self.auth(user), max_size=1 << 20, ping_interval=None) as ws:
            while not stop.is_set():
                try:
                    raw = await asyncio.wait_for(ws.recv(), timeout=0.5)
                except asyncio.TimeoutError:
                    continue
                frame = json.loads(raw)
                if frame["type"] == "ready":
                    ready.set()
                elif frame["type"] == "message.created":
                    on_text(frame["data"]["text"])

    async def idle(self, user: dict, connected: asyncio.Event, stop: asyncio.Event) -> None:
        ws_url = self.url.replace("http://", "ws://") + "/v1/realtime"
        async with websockets.connect(ws_url, additional_headers=self.auth(user), ping_interval=None) as ws:
            await ws.recv()  # ready
            connected.set()
            await stop.wait()


# MARK: - Synapse

class Synapse:
    def __init__(self, url: str, session: aiohttp.ClientSession, secret: str):
        self.url = url
        self.http = session
        self.secret = secret
        self.filter = json.dumps({"presence": {"types": []}, "account_data": {"types": []},
                                  "room": {"timeline": {"limit": 10}, "state": {"lazy_load_members": True}, "ephemeral": {"types": []}}})

    async def user(self, name: str) -> dict:
        async with self.http.get(f"{self.url}/_synapse/admin/v1/register") as r:
            nonce = (await r.json())["nonce"]
        mac = hmac.new(self.secret.encode(), digestmod=hashlib.sha1)
        mac.update(f"{nonce}\x00{name}\x00bench-pass-1\x00notadmin".encode())
        body = {"nonce": nonce, "username": name, "password": "bench-pass-1", "admin": False, "mac": mac.hexdigest()}
        async with self.http.post(f"{self.url}/_synapse/admin/v1/register", json=body) as r:
            assert r.status == 200, await r.text()
            data = await r.json()
        return {"token": data["access_token"], "id": data["user_id"], "name": name}

    @staticmethod
    def auth(user: dict) -> dict:
        return {"Authorization": f"Bearer {user['token']}"}

    async def pair(self, a: dict, b: dict) -> str:
        body = {"preset": "trusted_private_chat", "is_direct": True, "invite": [b["id"]]}
        async with self.http.post(f"{self.url}/_matrix/client/v3/createRoom", json=body, headers=self.auth(a)) as r:
            assert r.status == 200, await r.text()
            room = (await r.json())["room_id"]
        async with self.http.post(f"{self.url}/_matrix/client/v3/join/{room}", json={}, headers=self.auth(b)) as r:
            assert r.status == 200, await r.text()
        return room

    def send_target(self, user: dict, room: str) -> str:
        return f"PUT\t/_matrix/client/v3/rooms/{room}/send/m.room.message/{{cid}}\t{user['token']}"

    send_body = '{"msgtype":"m.text","body":"bench message {cid}"}'

    async def send(self, user: dict, room: str, text: str) -> None:
        async with self.http.put(f"{self.url}/_matrix/client/v3/rooms/{room}/send/m.room.message/{uuid.uuid4().hex}",
                                 json={"msgtype": "m.text", "body": text}, headers=self.auth(user)) as r:
            if r.status != 200:
                raise RuntimeError(f"send: {r.status} {await r.text()}")

    async def sync(self, user: dict, since: str | None, timeout_ms: int) -> dict:
        params = {"filter": self.filter, "timeout": str(timeout_ms)}
        if since:
            params["since"] = since
        async with self.http.get(f"{self.url}/_matrix/client/v3/sync", params=params, headers=self.auth(user),
                                 timeout=aiohttp.ClientTimeout(total=timeout_ms / 1000 + 60)) as r:
            assert r.status == 200, await r.text()
            return await r.json()

    async def listen(self, user: dict, on_text, ready: asyncio.Event, stop: asyncio.Event) -> None:
        since = (await self.sync(user, None, 0))["next_batch"]
        ready.set()
        while not stop.is_set():
            data = await self.sync(user, since, 5_000)
            since = data["next_batch"]
            for room in data.get("rooms", {}).get("join", {}).values():
                for event in room.get("timeline", {}).get("events", []):
                    if event.get("type") == "m.room.message":
                        on_text(event["content"].get("body", ""))

    async def idle(self, user: dict, connected: asyncio.Event, stop: asyncio.Event) -> None:
        since = user.get("since")
        if since is None:
            since = (await self.sync(user, None, 0))["next_batch"]
            user["since"] = since
        first = True
        while not stop.is_set():
            task = asyncio.ensure_future(self.sync(user, since, 30_000))
            if first:
                await asyncio.sleep(0.2)  # the long-poll is on the server
                connected.set()
                first = False
            done, _ = await asyncio.wait({task, asyncio.ensure_future(stop.wait())}, return_when=asyncio.FIRST_COMPLETED)
            if task in done:
                since = task.result()["next_batch"]
            else:
                task.cancel()


# MARK: - the run

async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--target", choices=["gatehouse", "synapse"], required=True)
    parser.add_argument("--url", required=True)
    parser.add_argument("--server-pid", type=int, required=True)
    parser.add_argument("--shared-secret", default="")
    parser.add_argument("--seconds", type=int, default=10, help="throughput run length")
    parser.add_argument("--idle", type=int, default=1000, help="idle realtime clients during the latency run")
    parser.add_argument("--interval", type=float, default=1.0, help="seconds between one pair's messages")
    parser.add_argument("--latency-seconds", type=int, default=20)
    parser.add_argument("--prefix", default="b" + uuid.uuid4().hex[:6])
    args = parser.parse_args()

    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as http:
        server = Gatehouse(args.url, http) if args.target == "gatehouse" else Synapse(args.url, http, args.shared_secret)
        started = time.monotonic()
        users = await gather_limited([lambda i=i: server.user(f"{args.prefix}u{i}") for i in range(2 * PAIRS)], 8)
        idle_users = await gather_limited([lambda i=i: server.user(f"{args.prefix}i{i}") for i in range(IDLE_USERS)], 8)
        pairs = [(users[2 * i], users[2 * i + 1]) for i in range(PAIRS)]
        rooms = await gather_limited([lambda p=p: server.pair(p[0], p[1]) for p in pairs], 8)
        print(f"setup: {len(users) + len(idle_users)} users, {len(rooms)} chats in {time.monotonic() - started:.1f} s", file=sys.stderr)

        # 1. Send throughput: 64 senders, each with its own chat.
        targets = "\n".join(server.send_target(pairs[i][0], rooms[i]) for i in range(SENDERS))
        env = dict(os.environ, WRK_TARGETS=targets, WRK_BODY=server.send_body)
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "send.lua")
        out = subprocess.run(["wrk", "-t", "2", "-c", str(SENDERS), "-d", f"{args.seconds}s", "--timeout", "10s", "-s", script, args.url],
                             env=env, capture_output=True, text=True, check=True).stdout
        wrk = json.loads(next(line for line in out.splitlines() if line.startswith("WRK_JSON "))[9:])
        print(f"send: {wrk}", file=sys.stderr)

        # 3 (before 2). Idle clients, and the memory they take.
        await asyncio.sleep(2)
        before = rss_kib(args.server_pid)
        stop = asyncio.Event()
        per_user = max(1, args.idle // IDLE_USERS)
        connected = [asyncio.Event() for _ in range(per_user * IDLE_USERS)]
        idle_tasks = []
        for index, event in enumerate(connected):
            idle_tasks.append(asyncio.create_task(server.idle(idle_users[index % IDLE_USERS], event, stop)))
            if index % 50 == 49:
                await asyncio.sleep(0.05)
        await asyncio.wait_for(asyncio.gather(*(e.wait() for e in connected)), timeout=300)
        await asyncio.sleep(3)
        after = rss_kib(args.server_pid)
        per_connection_kib = (after - before) / len(connected)
        print(f"idle: {len(connected)} clients, RSS {before} -> {after} KiB, {per_connection_kib:.1f} KiB each", file=sys.stderr)

        # 2. Delivery latency: 100 active pairs, the idle clients still connected.
        sent_at: dict[str, float] = {}
        latencies: list[float] = []

        def received(text: str) -> None:
            start = sent_at.pop(text, None)
            if start is not None:
                latencies.append((time.perf_counter() - start) * 1000)

        listen_stop = asyncio.Event()
        ready = [asyncio.Event() for _ in pairs]
        listeners = [asyncio.create_task(server.listen(b, received, ready[i], listen_stop)) for i, (_, b) in enumerate(pairs)]
        await asyncio.wait_for(asyncio.gather(*(e.wait() for e in ready)), timeout=120)
        await asyncio.sleep(1)
        deadline = time.monotonic() + args.latency_seconds
        failures = 0

        async def sender(index: int) -> None:
            nonlocal failures
            a, _ = pairs[index]
            await asyncio.sleep(args.interval * index / PAIRS)  # spread the pairs over the interval
            count = 0
            next_at = time.monotonic()
            while time.monotonic() < deadline:
                text = f"lat {index} {count}"
                count += 1
                sent_at[text] = time.perf_counter()
                try:
                    await server.send(a, rooms[index], text)
                except Exception as error:  # noqa: BLE001 - counted, reported
                    failures += 1
                    sent_at.pop(text, None)
                    print(f"latency send failed: {error}", file=sys.stderr)
                next_at += args.interval
                await asyncio.sleep(max(0, next_at - time.monotonic()))

        await asyncio.gather(*(sender(i) for i in range(PAIRS)))
        await asyncio.sleep(3)  # the last deliveries
        lost = len(sent_at)
        listen_stop.set()
        stop.set()
        for task in listeners + idle_tasks:
            task.cancel()
        await asyncio.gather(*listeners, *idle_tasks, return_exceptions=True)

        result = {
            "target": args.target,
            "send_rps": wrk["rps"], "send_p50_ms": wrk["p50_ms"], "send_p99_ms": wrk["p99_ms"], "send_non2xx": wrk["non2xx"], "send_errors": wrk["errors"],
            "delivered": len(latencies), "undelivered": lost, "send_failures": failures,
            "latency_p50_ms": round(percentile(latencies, 50), 2) if latencies else None,
            "latency_p99_ms": round(percentile(latencies, 99), 2) if latencies else None,
            "latency_mean_ms": round(statistics.fmean(latencies), 2) if latencies else None,
            "idle_clients": len(connected), "rss_before_kib": before, "rss_after_kib": after,
            "kib_per_idle_connection": round(per_connection_kib, 2),
        }
        print("RESULT " + json.dumps(result))


if __name__ == "__main__":
    asyncio.run(main())
