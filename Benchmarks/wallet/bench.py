#!/usr/bin/env python3
"""Wallet benchmark: transfers per second over HTTP against the database's own bank transfer, in
one run (docs/performance.md, "Wallet").

  gatehouse  --url URL --gatehouse BIN --workdir DIR   PAYERS accounts (signed up, phone verified,
             wallet attached, credited by `gatehouse wallet credit`), then wrk with CONNECTIONS
             connections posting 1-kopeck transfers between random payers, each with its own
             Idempotency-Key; checks the ledger balanced afterwards.
  pgbench    --pg URL   pgbench's built-in tpcb-like script (a bank transfer in raw SQL: three
             UPDATEs, a SELECT and an INSERT in one transaction) with the same number of clients
             on the same PostgreSQL; per-transaction latencies from its log.
  sqlite     --path FILE   the same tpcb-like transaction on SQLite in WAL mode with
             synchronous=NORMAL (Gatehouse's settings), one writer as fast as it goes: the single
             writer's own limit.

Each prints one `RESULT {json}` line; run.sh starts the servers and prints the ratios.
"""
from __future__ import annotations

import argparse
import asyncio
import glob
import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from proccpu import Meter  # noqa: E402


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(p / 100 * len(ordered))) - 1))]


def http(method, url, body=None, token=None, headers=None):
    request = urllib.request.Request(url, method=method, data=None if body is None else json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json", **(headers or {})})
    if token:
        request.add_header("Authorization", "Bearer " + token)
    with urllib.request.urlopen(request, timeout=30) as r:
        text = r.read()
        return json.loads(text) if text else None


def payer(url, index):
    tag, email, phone = f"payer{index}", f"payer{index}@bench.test", f"+7917{index:07d}"
    http("POST", url + "/v1/signup/code", {"email": email})
    code = http("GET", f"{url}/dev/outbox?to={email}&last=1")[0]["code"]
    session = http("POST", url + "/v1/signup", {"email": email, "code": code, "password": "Bench-pw-1!", "tag": tag})
    token = session["token"]
    http("POST", url + "/v1/me/phone", {"phone": phone, "currentPassword": "Bench-pw-1!"}, token)
    code = http("GET", f"{url}/dev/outbox?to=%2B{phone[1:]}&last=1")[0]["code"]
    http("POST", url + "/v1/me/phone/verify", {"phone": phone, "code": code}, token)
    http("POST", url + "/v1/wallet", token=token)
    if os.environ.get("DEVICES"):
        # A phone, as in an app: each transfer received is a push to compose (a development server keeps it in its outbox).
        http("POST", url + "/v1/me/devices", {"platform": "fcm", "token": f"bench-{tag}", "language": "en"}, token)
    return token, tag, phone


def gatehouse(args):
    from concurrent.futures import ThreadPoolExecutor
    env = dict(os.environ)
    with ThreadPoolExecutor(8) as pool:
        payers = list(pool.map(lambda i: payer(args.url, i), range(args.payers)))
    with ThreadPoolExecutor(4) as pool:
        def credit(p):
            subprocess.run([args.gatehouse, "wallet", "credit", "--phone", p[2], "--amount", "1000000.00"], cwd=args.workdir, env=env,
                           check=True, capture_output=True)
        list(pool.map(credit, payers))
    lua = os.path.join(os.path.dirname(os.path.abspath(__file__)), "transfer.lua")
    postgres = env.get("DATABASE_URL", "").startswith("postgres")
    meter = Meter(args.server_pid, postgres=postgres) if args.server_pid else None
    runs = []
    for seconds in (args.warmup, args.seconds):
        before = meter.sample() if meter else None
        out = subprocess.run(["wrk", "-t", "2", "-c", str(args.connections), "-d", f"{seconds}s", "--timeout", "10s", "--latency", "-s", lua, args.url],
                             env={**env, "WRK_PAYERS": "\n".join(f"{t}\t{g}" for t, g, _ in payers)}, capture_output=True, text=True, check=True).stdout
        runs.append(json.loads(next(line for line in out.splitlines() if line.startswith("WRK_JSON "))[9:]))
        if meter:  # processor time per answered transfer, from /proc
            runs[-1].update(meter.since(before, runs[-1]["requests"] - runs[-1]["non2xx"]))
        if len(runs) == 1 and env.get("DATABASE_URL", "").startswith("postgres"):
            # Statistics for the tables as the warm-up left them, as `pgbench -i` gives its own: otherwise whether
            # PostgreSQL's autovacuum happened to analyse a table while it was still nearly empty decides the run.
            # Plans made from that (the foreign-key checks' cached ones among them) scan the whole table, and the
            # rate fell to about 1,000/s in one run of three.
            subprocess.run(["psql", env["DATABASE_URL"], "-qc", "VACUUM ANALYZE"], check=True, capture_output=True)
    result = runs[-1]
    # Latency at a steady offered rate under the saturation above (where every latency is 64 ÷ the rate): by default
    # the share of this run's saturated rate an operator plans for (PACED_SHARE, 0.5), or PACED_RATE when set.
    rate = args.rate if args.rate > 0 else round(result["rps"] * args.share)
    if rate > 0:
        before = meter.sample() if meter else None
        paced = asyncio.run(paced_transfers(args.url, payers, rate, args.seconds, args.connections))
        if meter:
            paced.update(meter.since(before, paced["answered"] - paced["non2xx"]))
        result.update({f"paced_{k}": v for k, v in paced.items()})
    audit = subprocess.run([args.gatehouse, "wallet", "audit"], cwd=args.workdir, env=env, capture_output=True, text=True)
    result.update({"target": "gatehouse", "payers": args.payers, "connections": args.connections, "audit": audit.stdout.strip()})
    print("RESULT " + json.dumps(result))


async def paced_transfers(url, payers, rate, seconds, connections):
    """Open loop: transfer i is due at start + i/rate, whoever sends it; its latency counts from when it was due
    (so a late start is counted, as wrk2 and pgbench --rate do). Keep-alive HTTP/1.1 on `connections` sockets."""
    host, port = url.split("//")[1].split(":")
    port = int(port.rstrip("/"))
    total = int(rate * seconds)
    start = time.perf_counter() + 0.5
    prefix = "%08x" % random.getrandbits(32)
    state = {"next": 0, "latencies": [], "non2xx": 0}
    rng = random.Random(7)

    async def worker():
        reader, writer = await asyncio.open_connection(host, port)
        while state["next"] < total:
            i = state["next"]
            state["next"] += 1
            due = start + i / rate
            delay = due - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            token, _, _ = payers[i % len(payers)]
            payee = payers[rng.randrange(len(payers))]
            if payee is payers[i % len(payers)]:
                payee = payers[(i + 1) % len(payers)]
            body = ('{"to":{"tag":"%s"},"amount":1}' % payee[1]).encode()
            writer.write(b"POST /v1/wallet/transfers HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + token.encode()
                         + b"\r\nContent-Type: application/json\r\nIdempotency-Key: " + f"{prefix}-paced-{i}".encode()
                         + b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
            status = int((await reader.readline()).split()[1])
            length = 0
            while (line := await reader.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            await reader.readexactly(length)
            state["latencies"].append((time.perf_counter() - due) * 1000)
            if not 200 <= status < 300:
                state["non2xx"] += 1
        writer.close()

    await asyncio.gather(*(worker() for _ in range(connections)))
    took = time.perf_counter() - start
    lat = state["latencies"]
    return {"rate": rate, "rps": len(lat) / took, "p50_ms": percentile(lat, 50), "p99_ms": percentile(lat, 99), "non2xx": state["non2xx"],
            "answered": len(lat)}


def pgbench(args):
    work = tempfile.mkdtemp(prefix="pgbench-")
    subprocess.run(["pgbench", "-i", "-q", "-s", str(args.scale), args.pg], check=True, capture_output=True)
    runs = []
    meter = Meter(postgres=True)
    for seconds in (args.warmup, args.seconds):
        for old in glob.glob(os.path.join(work, "pgbench_log*")):
            os.remove(old)
        before = meter.sample()
        out = subprocess.run(["pgbench", "-b", "tpcb-like", "-c", str(args.connections), "-j", "2", "-T", str(seconds), "-l",
                              "--log-prefix", os.path.join(work, "pgbench_log"), args.pg], capture_output=True, text=True, check=True).stdout
        tps = float(next(line for line in out.splitlines() if line.startswith("tps")).split("=")[1].split()[0])
        latencies = []
        for path in glob.glob(os.path.join(work, "pgbench_log*")):
            with open(path) as f:
                latencies += [int(line.split()[2]) / 1000 for line in f if line.strip()]
        runs.append({"rps": tps, "p50_ms": percentile(latencies, 50), "p99_ms": percentile(latencies, 99), "requests": len(latencies),
                     **meter.since(before, len(latencies))})
    result = runs[-1]
    # The same steady rate as Gatehouse's (run.sh passes it), with -R: pgbench then counts each transaction's latency
    # from when it was due.
    rate = args.rate if args.rate > 0 else round(result["rps"] * args.share)
    if rate > 0:
        for old in glob.glob(os.path.join(work, "pgbench_log*")):
            os.remove(old)
        subprocess.run(["pgbench", "-b", "tpcb-like", "-c", str(args.connections), "-j", "2", "-T", str(args.seconds), "-R", str(rate), "-l",
                        "--log-prefix", os.path.join(work, "pgbench_log"), args.pg], capture_output=True, text=True, check=True)
        latencies = []
        for path in glob.glob(os.path.join(work, "pgbench_log*")):
            with open(path) as f:
                latencies += [int(line.split()[2]) / 1000 for line in f if line.strip()]
        result.update({"paced_rate": rate, "paced_rps": len(latencies) / args.seconds, "paced_p50_ms": percentile(latencies, 50),
                       "paced_p99_ms": percentile(latencies, 99)})
    result.update({"target": "pgbench", "scale": args.scale, "connections": args.connections})
    print("RESULT " + json.dumps(result))


def sqlite(args):
    db = sqlite3.connect(args.path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    accounts, tellers, branches = 100_000, 10, 1
    db.executescript("""
        CREATE TABLE branches (bid INTEGER PRIMARY KEY, bbalance INTEGER);
        CREATE TABLE tellers (tid INTEGER PRIMARY KEY, bid INTEGER, tbalance INTEGER);
        CREATE TABLE accounts (aid INTEGER PRIMARY KEY, bid INTEGER, abalance INTEGER);
        CREATE TABLE history (tid INTEGER, bid INTEGER, aid INTEGER, delta INTEGER, mtime TEXT);
    """)
    db.execute("BEGIN")
    db.executemany("INSERT INTO branches VALUES (?, 0)", [(i,) for i in range(1, branches + 1)])
    db.executemany("INSERT INTO tellers VALUES (?, 1, 0)", [(i,) for i in range(1, tellers + 1)])
    db.executemany("INSERT INTO accounts VALUES (?, 1, 0)", [(i,) for i in range(1, accounts + 1)])
    db.execute("COMMIT")
    rng = random.Random(1)
    runs = []
    for seconds in (args.warmup, args.seconds):
        latencies = []
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            aid, tid, delta = rng.randint(1, accounts), rng.randint(1, tellers), rng.randint(-5000, 5000)
            t0 = time.perf_counter()
            db.execute("BEGIN IMMEDIATE")
            db.execute("UPDATE accounts SET abalance = abalance + ? WHERE aid = ?", (delta, aid))
            db.execute("SELECT abalance FROM accounts WHERE aid = ?", (aid,)).fetchone()
            db.execute("UPDATE tellers SET tbalance = tbalance + ? WHERE tid = ?", (delta, tid))
            db.execute("UPDATE branches SET bbalance = bbalance + ? WHERE bid = 1", (delta,))
            db.execute("INSERT INTO history VALUES (?, 1, ?, ?, datetime('now'))", (tid, aid, delta))
            db.execute("COMMIT")
            latencies.append((time.perf_counter() - t0) * 1000)
        runs.append({"rps": len(latencies) / seconds, "p50_ms": percentile(latencies, 50), "p99_ms": percentile(latencies, 99), "requests": len(latencies)})
    result = runs[-1]
    result.update({"target": "sqlite-tpcb", "connections": 1})
    print("RESULT " + json.dumps(result))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", choices=["gatehouse", "pgbench", "sqlite"])
    p.add_argument("--url")
    p.add_argument("--gatehouse")
    p.add_argument("--server-pid", type=int, help="the server's process: its processor time per transfer is read from /proc")
    p.add_argument("--workdir")
    p.add_argument("--pg")
    p.add_argument("--path")
    p.add_argument("--payers", type=int, default=int(os.environ.get("PAYERS", "200")))
    p.add_argument("--connections", type=int, default=int(os.environ.get("CONNECTIONS", "64")))
    p.add_argument("--scale", type=int, default=int(os.environ.get("SCALE", "16")))
    p.add_argument("--seconds", type=int, default=int(os.environ.get("SECONDS_RUN", "15")))
    p.add_argument("--warmup", type=int, default=int(os.environ.get("WARMUP", "3")))
    p.add_argument("--rate", type=int, default=int(os.environ.get("PACED_RATE", "0")),
                   help="transfers a second offered steadily after the saturation run, for latency at that load (0: --share of it)")
    p.add_argument("--share", type=float, default=float(os.environ.get("PACED_SHARE", "0.5")),
                   help="without --rate, the steady rate is this share of the saturated rate measured in the same run (0: skip)")
    args = p.parse_args()
    {"gatehouse": gatehouse, "pgbench": pgbench, "sqlite": sqlite}[args.mode](args)


if __name__ == "__main__":
    main()
