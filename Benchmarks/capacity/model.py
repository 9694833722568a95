#!/usr/bin/env python3
"""The capacity model of docs/capacity.md: what a deployment needs for a number of registered people, computed from
the costs measured on this repository's benchmarks (each input below names the benchmark and the docs/performance.md
table it comes from) and from stated activity. Run it to print the tables; change an input to see its effect.

    python3 Benchmarks/capacity/model.py [--utilisation 0.5] [--json]
"""
import argparse
import json
import math

# Measured costs, one core of the benchmark machine (AMD EPYC, 2 cores), release build, PostgreSQL 15.
COST = {
    # Benchmarks/http/run.sh, "Cost per operation": an authenticated read (GET /v1/me), server µs.
    "read_server_ms": 0.129, "read_db_ms": 0.001,
    # Benchmarks/http: a password sign-in is one bcrypt hash at cost 10 (gatehouse bcrypt-speed: 54 ms), plus a read.
    "signin_server_ms": 54.0 + 0.5, "signin_db_ms": 0.5,
    # Benchmarks/messenger/run.sh --crowd at 400/s with 19,000 realtime clients: per delivered message.
    "message_server_ms": 2.43, "message_db_ms": 1.56,
    # Benchmarks/wallet at half load: per transfer.
    "transfer_server_ms": 2.0, "transfer_db_ms": 1.6,
    # Benchmarks/websocket-gateway and the crowd run: an idle authenticated realtime socket.
    "socket_kib": 6.8,
    # Benchmarks/bus/run.sh: Redis's own time per message crossing the bus (three instances).
    "redis_ms_per_message": 0.07,
    # The bus run's database: bytes per stored message (row and indexes, a short text) and per realtime event
    # (two per message; kept GATEHOUSE_MESSENGER_EVENT_RETENTION_SECONDS, 7 days); per account with its session,
    # codes and audit rows.
    "message_bytes": 418, "event_bytes": 450, "account_bytes": 3_000,
}

# Stated activity, per registered person (a messenger with a wallet, like the specs' apps).
ACTIVITY = {
    "daily_active": 0.20,            # share of registered people active on a day
    "peak_online": 0.05,             # share of registered people with a realtime socket open at the peak hour
    "signins_per_active": 0.3,       # password sign-ins per active person a day (sessions resume with refresh tokens)
    "reads_per_active": 200,         # authenticated API reads per active person a day (lists, profiles, history)
    "messages_per_active": 20,       # messages sent per active person a day
    "transfers_per_active": 0.2,     # transfers per active person a day
    "peak_factor": 3.0,              # the peak hour's rate ÷ the day's average
}

INSTANCE_CORES = 4                   # one instance per 4-core machine
SOCKETS_PER_INSTANCE = 50_000        # descriptors and memory a 4-core instance is given for sockets


def plan(registered: int, utilisation: float) -> dict:
    a = ACTIVITY
    active = registered * a["daily_active"]
    per_second = lambda per_day: per_day * active / 86_400 * a["peak_factor"]
    rates = {"signins": per_second(a["signins_per_active"]), "reads": per_second(a["reads_per_active"]),
             "messages": per_second(a["messages_per_active"]), "transfers": per_second(a["transfers_per_active"])}
    server = (rates["signins"] * COST["signin_server_ms"] + rates["reads"] * COST["read_server_ms"]
              + rates["messages"] * COST["message_server_ms"] + rates["transfers"] * COST["transfer_server_ms"]) / 1000
    db = (rates["signins"] * COST["signin_db_ms"] + rates["reads"] * COST["read_db_ms"]
          + rates["messages"] * COST["message_db_ms"] + rates["transfers"] * COST["transfer_db_ms"]) / 1000
    sockets = registered * a["peak_online"]
    by_cpu = math.ceil(server / utilisation / INSTANCE_CORES)
    by_sockets = math.ceil(sockets / SOCKETS_PER_INSTANCE)
    instances = max(2, by_cpu, by_sockets)
    messages_per_day = active * a["messages_per_active"]
    storage_year_gb = (messages_per_day * 365 * COST["message_bytes"] + registered * COST["account_bytes"]) / 1e9
    events_gb = messages_per_day * 2 * 7 * COST["event_bytes"] / 1e9
    return {"registered": registered, "peak": {k: round(v, 1) for k, v in rates.items()},
            "server_cores": round(server, 2), "db_cores": round(db, 2), "sockets": int(sockets),
            "socket_memory_gb": round(sockets * COST["socket_kib"] / 1024 / 1024, 2),
            "instances": instances, "instances_by": "sockets" if by_sockets > by_cpu else "processor",
            "db_cores_needed": max(2, math.ceil(db / utilisation)),
            "bus": "PostgreSQL NOTIFY" if rates["messages"] < 300 else "Redis",
            "redis_cores": round(rates["messages"] * COST["redis_ms_per_message"] / 1000, 3),
            "storage_first_year_gb": round(storage_year_gb, 1), "events_kept_gb": round(events_gb, 2)}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--utilisation", type=float, default=0.5, help="the share of a core planned to be busy at the peak")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    plans = [plan(n, args.utilisation) for n in (10_000, 100_000, 1_000_000, 10_000_000)]
    if args.json:
        print(json.dumps(plans, indent=1))
        return
    print("| registered | peak sign-ins/s | reads/s | messages/s | transfers/s | instance cores busy | instances (4 cores) | "
          "PostgreSQL cores busy → primary | realtime sockets (memory) | bus | stored, first year | events kept |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|")
    for r in plans:
        pk = r["peak"]
        print(f"| {r['registered']:,} | {pk['signins']:,} | {pk['reads']:,} | {pk['messages']:,} | {pk['transfers']:,} | "
              f"{r['server_cores']} | {r['instances']} (by {r['instances_by']}) | {r['db_cores']} → {r['db_cores_needed']} | "
              f"{r['sockets']:,} ({r['socket_memory_gb']} GB) | {r['bus']} | {r['storage_first_year_gb']} GB | {r['events_kept_gb']} GB |")


if __name__ == "__main__":
    main()
