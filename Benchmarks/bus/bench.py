#!/usr/bin/env python3
"""The event bus between three instances: PostgreSQL's LISTEN/NOTIFY against Redis (Benchmarks/bus/run.sh).

For each bus, on a fresh database: three instances; PAIRS pairs of people, the first of each pair sending through
instance k % 3 and the second listening on a realtime socket of instance (k + 1) % 3, so that every delivery crosses
the bus; messages at RATE a second for SECONDS. Reports deliveries a second, the delivery latency (from the send's
start to the frame), and the processor time per delivered message of the three instances, PostgreSQL and Redis.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid

import aiohttp
import websockets

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "messenger"))
from bench import gather_limited, percentile  # noqa: E402
from proccpu import postgres_seconds, process_seconds  # noqa: E402

PORTS = [18101, 18102, 18103]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def admin_url(url: str) -> tuple[str, str]:
    """The server's maintenance database URL and the host:port part."""
    m = re.match(r"postgres(?:ql)?://([^@]+)@([^/]+)/", url)
    assert m, url
    return f"postgres://postgres@{m.group(2)}/postgres", m.group(2)


def fresh_database(admin: str, name: str) -> None:
    subprocess.run(["psql", admin, "-qc", f"DROP DATABASE IF EXISTS {name}", "-c",
                    f"CREATE DATABASE {name} ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0"],
                   check=True, stdout=subprocess.DEVNULL)


async def wait_up(url: str, process: subprocess.Popen, log: str) -> None:
    async with aiohttp.ClientSession() as http:
        for _ in range(600):
            if process.poll() is not None:
                sys.stderr.write(open(log).read()[-3000:])
                raise RuntimeError("the server exited at start")
            try:
                async with http.get(url + "/health") as r:
                    if r.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.1)
    raise RuntimeError("the server did not answer")


def start_instance(binary: str, port: int, database: str, bus: str, migrate: bool, work: str) -> tuple[subprocess.Popen, str]:
    env = dict(os.environ, DATABASE_URL=database, GATEHOUSE_PORT=str(port), GATEHOUSE_LOG_LEVEL="warning", GATEHOUSE_BCRYPT_COST="4",
               GATEHOUSE_DELIVERY_WAIT_SECONDS="0", GATEHOUSE_CODE_REQUESTS_PER_IP="100000",
               GATEHOUSE_CODE_REQUESTS_PER_IP_PER_DESTINATION="100000", GATEHOUSE_EMAILS_PER_ADDRESS_PER_DAY="1000",
               GATEHOUSE_HTTP_MAX_CONNECTIONS_PER_ADDRESS="1000000", GATEHOUSE_MESSENGER_MESSAGES_PER_MINUTE="1000000",
               GATEHOUSE_AUTO_MIGRATE="true" if migrate else "false", GATEHOUSE_EVENT_BUS=bus,
               GATEHOUSE_BLOB_DIR=os.path.join(work, "blobs"))
    log = os.path.join(work, f"gatehouse-{port}.log")
    process = subprocess.Popen([binary, "serve"], env=env, cwd=work, stdout=open(log, "w"), stderr=subprocess.STDOUT)
    return process, log


async def sign_up(http: aiohttp.ClientSession, url: str, name: str) -> dict:
    email = f"{name}@bus.example"
    async with http.post(f"{url}/v1/signup/code", json={"email": email}) as r:
        assert r.status == 202, await r.text()
    async with http.get(f"{url}/dev/outbox", params={"to": email}) as r:
        code = (await r.json())[0]["code"]
    body = {"email": email, "code": code, "password": "bench-pass-1", "tag": name, "firstName": name}
    async with http.post(f"{url}/v1/signup", json=body) as r:
        assert r.status == 201, await r.text()
        session = await r.json()
    return {"token": session["token"], "id": session["account"]["id"]}


async def measure(args, bus_name: str, bus: str, extra_pids: list[int]) -> dict:
    admin, _ = admin_url(args.postgres)
    name = f"bench_bus_{bus_name}"
    fresh_database(admin, name)
    database = re.sub(r"/[^/]*$", f"/{name}", args.postgres.split("?")[0])
    database = re.sub(r"//[^@]+@", "//postgres@", database)
    work = tempfile.mkdtemp(prefix="bus-bench-")
    instances = []
    try:
        first = start_instance(args.bin, PORTS[0], database, bus, True, work)
        instances.append(first)
        await wait_up(f"http://127.0.0.1:{PORTS[0]}", *first)
        for port in PORTS[1:]:
            instances.append(start_instance(args.bin, port, database, bus, False, work))
        for port, (process, log) in zip(PORTS, instances):
            await wait_up(f"http://127.0.0.1:{port}", process, log)
        urls = [f"http://127.0.0.1:{p}" for p in PORTS]
        connector = aiohttp.TCPConnector(limit=256)
        async with aiohttp.ClientSession(connector=connector) as http:
            people = await gather_limited([lambda i=i: sign_up(http, urls[0], f"bus{i}") for i in range(args.pairs * 2)], 16)
            pairs = []
            for k in range(args.pairs):
                a, b = people[2 * k], people[2 * k + 1]
                async with http.post(f"{urls[0]}/v1/chats", json={"personId": b["id"]}, headers={"Authorization": f"Bearer {a['token']}"}) as r:
                    assert r.status == 200, await r.text()
                    chat = (await r.json())["id"]
                pairs.append((a, b, chat, k % 3, (k + 1) % 3))

            sent: dict[str, float] = {}
            latencies: list[float] = []
            stop = asyncio.Event()

            async def listen(user: dict, instance: int, ready: asyncio.Event) -> None:
                ws_url = urls[instance].replace("http://", "ws://") + "/v1/realtime"
                async with websockets.connect(ws_url, additional_headers={"Authorization": f"Bearer {user['token']}"},
                                              max_size=1 << 20, ping_interval=None) as ws:
                    while not stop.is_set():
                        try:
                            raw = await asyncio.wait_for(ws.recv(), timeout=0.5)
                        except asyncio.TimeoutError:
                            continue
                        frame = json.loads(raw)
                        if frame["type"] == "ready":
                            ready.set()
                        elif frame["type"] == "message.created":
                            # The recipient's copy carries no clientMessageId: the text carries the id.
                            started = sent.pop(frame["data"].get("text", "")[4:], None)
                            if started is not None:
                                latencies.append(time.monotonic() - started)

            readies = [asyncio.Event() for _ in pairs]
            listeners = [asyncio.create_task(listen(b, where, ready)) for (a, b, chat, _, where), ready in zip(pairs, readies)]
            await asyncio.wait_for(asyncio.gather(*(r.wait() for r in readies)), timeout=60)

            pids = [p.pid for p, _ in instances]
            before = (sum(process_seconds(p) for p in pids), postgres_seconds(), sum(process_seconds(p) for p in extra_pids))
            errors = 0

            async def send(k: int) -> None:
                nonlocal errors
                a, b, chat, via, _ = pairs[k % len(pairs)]
                cid = uuid.uuid4().hex
                sent[cid] = time.monotonic()
                try:
                    async with http.post(f"{urls[via]}/v1/chats/{chat}/messages", json={"text": "bus " + cid, "clientMessageId": cid},
                                         headers={"Authorization": f"Bearer {a['token']}"}) as r:
                        if r.status != 201:
                            errors += 1
                except aiohttp.ClientError:
                    errors += 1

            start = time.monotonic()
            total = int(args.rate * args.seconds)
            tasks = []
            for k in range(total):
                due = start + k / args.rate
                delay = due - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
                tasks.append(asyncio.create_task(send(k)))
            await asyncio.gather(*tasks)
            # The last deliveries.
            deadline = time.monotonic() + 10
            while sent and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            elapsed = time.monotonic() - start
            after = (sum(process_seconds(p) for p in pids), postgres_seconds(), sum(process_seconds(p) for p in extra_pids))
            stop.set()
            await asyncio.gather(*listeners, return_exceptions=True)
        delivered = len(latencies)
        n = max(delivered, 1)
        return {"bus": bus_name, "sent": total, "delivered": delivered, "errors": errors, "lost": len(sent),
                "per_second": round(delivered / elapsed, 1),
                "p50_ms": round(1000 * percentile(latencies, 50), 1) if latencies else None,
                "p99_ms": round(1000 * percentile(latencies, 99), 1) if latencies else None,
                "server_ms": round(1000 * (after[0] - before[0]) / n, 3), "postgres_ms": round(1000 * (after[1] - before[1]) / n, 3),
                "redis_ms": round(1000 * (after[2] - before[2]) / n, 3) if extra_pids else None}
    finally:
        for process, _ in instances:
            process.send_signal(signal.SIGTERM)
        for process, _ in instances:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()


async def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--postgres", required=True)
    p.add_argument("--pairs", type=int, default=300)
    p.add_argument("--rate", type=float, default=600)
    p.add_argument("--seconds", type=float, default=20)
    args = p.parse_args()
    results = [await measure(args, "notify", "database", [])]
    port = free_port()
    redis = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.5)
        results.append(await measure(args, "redis", f"redis://127.0.0.1:{port}", [redis.pid]))
    finally:
        redis.terminate()
        redis.wait()
    print(f"three instances, {args.pairs} pairs, {args.rate:g} messages/s for {args.seconds:g} s, every delivery across the bus")
    print("| bus | delivered/s | p50 / p99 | instances ms/message | PostgreSQL ms/message | Redis ms/message | lost |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in results:
        redis_ms = "—" if r["redis_ms"] is None else f"{r['redis_ms']:.3f}"
        print(f"| {r['bus']} | {r['per_second']:,} | {r['p50_ms']} / {r['p99_ms']} ms | {r['server_ms']:.3f} | {r['postgres_ms']:.3f} | {redis_ms} | {r['lost']} |")
    for r in results:
        print("RESULT " + json.dumps(r))


if __name__ == "__main__":
    asyncio.run(main())
