#!/usr/bin/env python3
"""Holds many idle, authenticated connections to the Gatehouse WebSocket gateway and reports
the server's resident memory per connection, then the LOGIN round trip (p50/p99) while they
are held. Connections are spread over several loopback source addresses (127.0.0.2 and up)
so the ephemeral port range of one address is not the limit."""
import argparse
import asyncio
import json
import resource
import statistics
import time

import websockets


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def login_frame(email, password, seq):
    return json.dumps({"type": "LOGIN_CUSTOMER", "sequence_id": seq, "data": {"email": email, "password": password}})


async def open_authenticated(url, source, email, password, seq):
    ws = await websockets.connect(url, local_addr=(source, 0), ping_interval=None, compression=None,
                                  max_queue=2, open_timeout=60)
    await ws.send(login_frame(email, password, seq))
    answer = json.loads(await ws.recv())
    if answer.get("type") != "CUSTOMER_API_TOKEN":
        raise RuntimeError(f"login refused: {answer}")
    return ws


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--server-pid", type=int, required=True)
    p.add_argument("--connections", type=int, default=50_000)
    p.add_argument("--sources", type=int, default=8, help="source addresses 127.0.0.2 … 127.0.0.(1+N)")
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--email", required=True)
    p.add_argument("--password", required=True)
    p.add_argument("--latency-workers", type=int, default=32)
    p.add_argument("--latency-seconds", type=float, default=10)
    args = p.parse_args()

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = args.connections + args.latency_workers + 64
    if wanted > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(wanted, hard), hard))
        except ValueError:
            pass
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = min(args.connections, soft - args.latency_workers - 64)
    if target < args.connections:
        print(f"NOTE: descriptor limit {soft} (hard {hard}) allows {target} connections, not {args.connections}")
    sources = [f"127.0.0.{2 + i}" for i in range(args.sources)]

    # Warm up: allocator arenas, caches, the login path.
    warm = [await open_authenticated(args.url, sources[0], args.email, args.password, f"w{i}") for i in range(64)]
    for ws in warm:
        await ws.close()
    await asyncio.sleep(2)
    before = rss_kib(args.server_pid)

    held = []
    started = time.monotonic()
    while len(held) < target:
        n = min(args.batch, target - len(held))
        batch = [open_authenticated(args.url, sources[(len(held) + i) % len(sources)], args.email, args.password, f"c{len(held) + i}")
                 for i in range(n)]
        held.extend(await asyncio.gather(*batch))
        if len(held) % 5000 < args.batch:
            print(f"  {len(held)} connections authenticated ({time.monotonic() - started:.0f} s)", flush=True)
    await asyncio.sleep(5)
    after = rss_kib(args.server_pid)
    per_connection = (after - before) * 1024 / len(held)

    # LOGIN round trips on separate connections while all the idle ones are held.
    latencies = []
    deadline = time.monotonic() + args.latency_seconds

    async def worker(index):
        ws = await open_authenticated(args.url, sources[index % len(sources)], args.email, args.password, f"l{index}")
        i = 0
        while time.monotonic() < deadline:
            t0 = time.perf_counter()
            await ws.send(login_frame(args.email, args.password, f"l{index}-{i}"))
            answer = json.loads(await ws.recv())
            latencies.append(time.perf_counter() - t0)
            if answer.get("type") != "CUSTOMER_API_TOKEN":
                raise RuntimeError(answer)
            i += 1
        await ws.close()

    await asyncio.gather(*(worker(i) for i in range(args.latency_workers)))
    still_open = sum(1 for ws in held if ws.state.name == "OPEN")
    latencies.sort()
    result = {
        "connections_held": len(held),
        "connections_still_open_after_latency_phase": still_open,
        "server_rss_before_kib": before,
        "server_rss_after_kib": after,
        "bytes_per_idle_connection": round(per_connection),
        "kib_per_idle_connection": round(per_connection / 1024, 2),
        "login_round_trips": len(latencies),
        "login_per_second": round(len(latencies) / args.latency_seconds, 1),
        "login_p50_ms": round(statistics.median(latencies) * 1000, 2),
        "login_p99_ms": round(latencies[int(len(latencies) * 0.99) - 1] * 1000, 2),
        "latency_workers": args.latency_workers,
    }
    print(json.dumps(result, indent=2))
    print(f"RESULT: {len(held)} idle authenticated connections, {result['kib_per_idle_connection']} KiB each "
          f"(goal <= 16 KiB: {'met' if result['kib_per_idle_connection'] <= 16 else 'NOT met'}); "
          f"LOGIN p50 {result['login_p50_ms']} ms, p99 {result['login_p99_ms']} ms at {result['login_per_second']}/s "
          f"with {args.latency_workers} concurrent clients")
    for ws in held:
        await ws.close()


asyncio.run(main())
