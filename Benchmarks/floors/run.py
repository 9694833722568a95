#!/usr/bin/env python3
"""The database's own cost of an operation: a pgbench custom script doing the least a send or a transfer must write
(send.sql, transfer.sql), on the database a Gatehouse benchmark has just filled (its people, wallets and chats), so
the ratio to Gatehouse's PostgreSQL time per operation says how close Gatehouse comes to the database's floor.

    run.py transfer --pg URL [--clients 64] [--seconds 15] [--rate R]
    run.py send     --pg URL [--clients 64] [--seconds 15] [--rate R]

Prints one `RESULT {json}` line: transactions a second, latency p50/p99 (from pgbench's log), and PostgreSQL's
processor time per transaction read from /proc (Benchmarks/proccpu.py). With --rate, pgbench paces the transactions
(-R) and counts each one's latency from when it was due, as the Gatehouse runs do.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from proccpu import Meter  # noqa: E402


def psql(url, sql):
    return subprocess.run(["psql", url, "-qAtc", sql], check=True, capture_output=True, text=True).stdout.strip()


def prepare(kind, url):
    """The people or chats the script picks from, numbered 1…n; returns n."""
    if kind == "transfer":
        psql(url, "DROP TABLE IF EXISTS bench_floor_people; "
                  "CREATE TABLE bench_floor_people AS SELECT row_number() OVER (ORDER BY id) AS n, "
                  "id AS wallet, account_id AS account FROM wallets WHERE account_id IS NOT NULL; "
                  "ALTER TABLE bench_floor_people ADD PRIMARY KEY (n); ANALYZE bench_floor_people")
        return int(psql(url, "SELECT count(*) FROM bench_floor_people"))
    psql(url, "DROP TABLE IF EXISTS bench_floor_chats; "
              "CREATE TABLE bench_floor_chats AS SELECT row_number() OVER (ORDER BY id) AS n, id, low_id, high_id FROM chats; "
              "ALTER TABLE bench_floor_chats ADD PRIMARY KEY (n); ANALYZE bench_floor_chats")
    return int(psql(url, "SELECT count(*) FROM bench_floor_chats"))


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(p / 100 * len(ordered))) - 1))] if ordered else None


def run(kind, url, count, clients, seconds, rate=0):
    work = tempfile.mkdtemp(prefix="floor-")
    script = os.path.join(HERE, f"{kind}.sql")
    variable = "people" if kind == "transfer" else "chats"
    cmd = ["pgbench", "-n", "-M", "prepared", "-f", script, "-D", f"{variable}={count}", "-c", str(clients), "-j", "2", "-T", str(seconds),
           "-l", "--log-prefix", os.path.join(work, "log")]
    if rate:
        cmd += ["-R", str(rate)]
    meter = Meter(postgres=True)
    before = meter.sample()
    out = subprocess.run(cmd + [url], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"pgbench failed:\n{out.stdout}\n{out.stderr}")
    latencies = []
    for path in glob.glob(os.path.join(work, "log*")):
        with open(path) as f:
            latencies += [int(line.split()[2]) / 1000 for line in f if line.strip()]
    done = len(latencies)
    cost = meter.since(before, done)
    return {"target": f"{kind} floor", "clients": clients, "rate": rate, "tps": done / seconds, "transactions": done,
            "p50_ms": percentile(latencies, 50), "p99_ms": percentile(latencies, 99), "postgres_ms": cost["postgres_ms"]}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("kind", choices=["transfer", "send"])
    p.add_argument("--pg", required=True)
    p.add_argument("--clients", type=int, default=64)
    p.add_argument("--seconds", type=int, default=15)
    p.add_argument("--rate", type=float, default=0)
    args = p.parse_args()
    count = prepare(args.kind, args.pg)
    if count < 2:
        raise SystemExit(f"the database has {count} {'wallets' if args.kind == 'transfer' else 'chats'}: run the Gatehouse benchmark on it first")
    result = run(args.kind, args.pg, count, args.clients, args.seconds, args.rate)
    print("RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
