#!/usr/bin/env python3
"""A read replica's effect on the primary under a read-heavy mix (Benchmarks/replica/run.sh).

A fresh database on the PostgreSQL at --postgres (data folder --pgdata), a hot standby of it made with
pg_basebackup, one Gatehouse instance. READERS people each with a chat and a friendship with one of WRITERS others,
40 messages in each chat. Then the same mix at RATE operations a second for SECONDS, twice: the instance on the
primary alone, then the instance with the replica (GATEHOUSE_DATABASE_REPLICA_URLS). Readers search people, list
their chats and friends and read an older page of their chat; writers send messages (WRITE_SHARE of the operations).
Reports per run the operations a second, p50/p99, errors, and processor time per operation of the instance, the
primary PostgreSQL and the replica, each PostgreSQL counted by its own postmaster's processes.
"""
from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid

import aiohttp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "messenger"))
from bench import gather_limited, percentile  # noqa: E402  (Benchmarks/messenger)
from proccpu import process_seconds  # noqa: E402

# The bus benchmark's instance helpers, loaded by path: its module is called bench too.
_spec = importlib.util.spec_from_file_location("bus_bench", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bus", "bench.py"))
bus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bus)

PORT = 18111


def as_postgres(command: list[str]) -> list[str]:
    """PostgreSQL's programs refuse root: run them as postgres then (setpriv replaces itself with the program)."""
    if os.getuid() == 0:
        return ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--"] + command
    return command


def pg_bin() -> str:
    versions = sorted(os.listdir("/usr/lib/postgresql"), key=lambda v: int(v.split(".")[0]))
    return f"/usr/lib/postgresql/{versions[-1]}/bin"


def tree_seconds(postmaster: int) -> float:
    """A postmaster's processor time, its ended children's, and its live children's."""
    total = process_seconds(postmaster, children=True)
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parent = int(f.read().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
            if parent == postmaster:
                total += process_seconds(int(entry))
    return total


class Replica:
    def __init__(self, primary_host: str, primary_port: int):
        self.port = bus.free_port()
        self.folder = tempfile.mkdtemp(prefix="replica-bench-")
        if os.getuid() == 0:
            shutil.chown(self.folder, "postgres", "postgres")
        os.chmod(self.folder, 0o700)
        subprocess.run(as_postgres([f"{pg_bin()}/pg_basebackup", "-h", primary_host, "-p", str(primary_port), "-U", "postgres",
                                    "-D", self.folder, "-R", "-X", "stream", "--checkpoint=fast"]), check=True)
        self.process = subprocess.Popen(as_postgres([f"{pg_bin()}/postgres", "-D", self.folder, "-p", str(self.port), "-k", "",
                                                     "-c", "listen_addresses=127.0.0.1", "-c", "max_connections=400",
                                                     "-c", "fsync=off", "-c", "hot_standby=on"]),
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(300):
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.1)
        raise RuntimeError("the replica did not start")

    def stop(self) -> None:
        self.process.send_signal(signal.SIGQUIT)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
        shutil.rmtree(self.folder, ignore_errors=True)


def stop_instance(process: subprocess.Popen) -> None:
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()


def auth(person: dict) -> dict:
    return {"Authorization": f"Bearer {person['token']}"}


async def seed(http: aiohttp.ClientSession, url: str, readers: int, writers: int) -> dict:
    writer_people = await gather_limited([lambda i=i: bus.sign_up(http, url, f"writer{i}") for i in range(writers)], 16)
    reader_people = await gather_limited([lambda i=i: bus.sign_up(http, url, f"reader{i}") for i in range(readers)], 16)

    async def connect(i: int) -> dict:
        reader, writer = reader_people[i], writer_people[i % writers]
        async with http.post(f"{url}/v1/friends/requests", json={"personId": writer["id"]}, headers=auth(reader)) as r:
            assert r.status == 200, await r.text()
        async with http.post(f"{url}/v1/friends/requests", json={"personId": reader["id"]}, headers=auth(writer)) as r:
            assert r.status == 200, await r.text()
        async with http.post(f"{url}/v1/chats", json={"personId": writer["id"]}, headers=auth(reader)) as r:
            assert r.status == 200, await r.text()
            chat = (await r.json())["id"]
        ids = []
        for k in range(40):
            who = writer if k % 2 == 0 else reader
            async with http.post(f"{url}/v1/chats/{chat}/messages", json={"text": f"seed {k} " + "x" * (k % 50), "clientMessageId": uuid.uuid4().hex},
                                 headers=auth(who)) as r:
                assert r.status == 201, await r.text()
                ids.append((await r.json())["id"])
        return {"reader": reader, "writer": writer, "chat": chat, "middle": ids[25]}

    chats = await gather_limited([lambda i=i: connect(i) for i in range(readers)], 16)
    return {"readers": reader_people, "writers": writer_people, "chats": chats}


async def run_mix(args, url: str, world: dict, pids: dict) -> dict:
    rng = random.Random(7)
    latencies: list[float] = []
    errors = 0
    connector = aiohttp.TCPConnector(limit=128)
    async with aiohttp.ClientSession(connector=connector) as http:
        async def op(k: int) -> None:
            nonlocal errors
            started = time.monotonic()
            if rng.random() < args.write_share:
                chat = world["chats"][k % len(world["chats"])]
                request = http.post(f"{url}/v1/chats/{chat['chat']}/messages", json={"text": f"mix {k}", "clientMessageId": uuid.uuid4().hex},
                                    headers=auth(chat["writer"]))
                expected = 201
            else:
                chat = world["chats"][rng.randrange(len(world["chats"]))]
                reader, kind = chat["reader"], rng.random()
                if kind < 0.30:
                    request = http.get(f"{url}/v1/people", params={"q": f"reader{rng.randrange(10, 99)}"}, headers=auth(reader))
                elif kind < 0.55:
                    request = http.get(f"{url}/v1/chats", headers=auth(reader))
                elif kind < 0.75:
                    request = http.get(f"{url}/v1/friends", headers=auth(reader))
                else:
                    request = http.get(f"{url}/v1/chats/{chat['chat']}/messages", params={"before": chat["middle"], "limit": "20"}, headers=auth(reader))
                expected = 200
            try:
                async with request as r:
                    await r.read()
                    if r.status != expected:
                        errors += 1
            except aiohttp.ClientError:
                errors += 1
            latencies.append(time.monotonic() - started)

        before = {name: (process_seconds(pid) if name == "instance" else tree_seconds(pid)) for name, pid in pids.items()}
        start = time.monotonic()
        total = int(args.rate * args.seconds)
        tasks = []
        for k in range(total):
            delay = start + k / args.rate - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(op(k)))
        await asyncio.gather(*tasks)
        elapsed = time.monotonic() - start
        after = {name: (process_seconds(pid) if name == "instance" else tree_seconds(pid)) for name, pid in pids.items()}
    result = {"operations": total, "per_second": round(total / elapsed, 1), "errors": errors,
              "p50_ms": round(1000 * percentile(latencies, 50), 2), "p99_ms": round(1000 * percentile(latencies, 99), 2)}
    for name in pids:
        result[f"{name}_ms"] = round(1000 * (after[name] - before[name]) / total, 3)
    return result


async def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--postgres", required=True)
    p.add_argument("--pgdata", required=True)
    p.add_argument("--rate", type=float, default=300)
    p.add_argument("--seconds", type=float, default=20)
    p.add_argument("--readers", type=int, default=200)
    p.add_argument("--writers", type=int, default=20)
    p.add_argument("--write-share", type=float, default=0.05)
    args = p.parse_args()
    m = re.match(r"postgres(?:ql)?://[^@]+@([^:/]+):(\d+)/", args.postgres)
    assert m, args.postgres
    host, port = m.group(1), int(m.group(2))
    admin = f"postgres://postgres@{host}:{port}/postgres"
    name = "bench_replica"
    subprocess.run(["psql", admin, "-qc", f"DROP DATABASE IF EXISTS {name}", "-c",
                    f"CREATE DATABASE {name} ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0"],
                   check=True, stdout=subprocess.DEVNULL)
    database = f"postgres://postgres@{host}:{port}/{name}"
    with open(os.path.join(args.pgdata, "postmaster.pid")) as f:
        primary_postmaster = int(f.readline())
    replica = Replica(host, port)
    work = tempfile.mkdtemp(prefix="replica-bench-work-")
    url = f"http://127.0.0.1:{PORT}"
    results = []
    try:
        os.environ.pop("GATEHOUSE_DATABASE_REPLICA_URLS", None)
        process, log = bus.start_instance(args.bin, PORT, database, "database", True, work)
        try:
            await bus.wait_up(url, process, log)
            async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=64)) as http:
                world = await seed(http, url, args.readers, args.writers)
            await asyncio.sleep(6)   # past the writers' and readers' pins of the seeding
            results.append(("primary alone", await run_mix(args, url, world, {"instance": process.pid, "primary": primary_postmaster,
                                                                               "replica": replica.process.pid})))
        finally:
            stop_instance(process)
        replica_url = f"postgres://postgres@127.0.0.1:{replica.port}/{name}"
        os.environ["GATEHOUSE_DATABASE_REPLICA_URLS"] = replica_url
        process, log = bus.start_instance(args.bin, PORT, database, "database", False, work)
        try:
            await bus.wait_up(url, process, log)
            await asyncio.sleep(2)   # the first checks of the replica
            results.append(("with a replica", await run_mix(args, url, world, {"instance": process.pid, "primary": primary_postmaster,
                                                                                "replica": replica.process.pid})))
        finally:
            stop_instance(process)
    finally:
        replica.stop()
        shutil.rmtree(work, ignore_errors=True)
    print(f"one instance, {args.readers} readers and {args.writers} writers, {args.rate:g} operations/s for {args.seconds:g} s, "
          f"{args.write_share:.0%} sends, the rest searches, chat and friends lists and older history pages")
    print("| run | operations/s | p50 / p99 | errors | instance ms/op | primary PostgreSQL ms/op | replica PostgreSQL ms/op |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, r in results:
        print(f"| {label} | {r['per_second']:,} | {r['p50_ms']} / {r['p99_ms']} ms | {r['errors']} | {r['instance_ms']:.3f} | "
              f"{r['primary_ms']:.3f} | {r['replica_ms']:.3f} |")
    if len(results) == 2 and results[1][1]["primary_ms"] > 0:
        print(f"primary PostgreSQL per operation: {results[0][1]['primary_ms'] / results[1][1]['primary_ms']:.2f}x less with the replica")
    for label, r in results:
        print("RESULT " + json.dumps(dict(r, run=label)))


if __name__ == "__main__":
    asyncio.run(main())
