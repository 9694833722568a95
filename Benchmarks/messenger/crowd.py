#!/usr/bin/env python3
"""Delivery under a crowd: most clients connected and idle, a few talking.

For one server already running (`--target gatehouse|synapse --url URL`), in one run:

  1. setup: `--talkers` accounts in pairs, a chat per pair, and `--crowd-accounts` more;
  2. every talker's realtime client connected (Gatehouse: its `/v1/realtime` socket; Synapse: a `/sync`
     long-poll loop);
  3. without the crowd: messages sent at `--rate` a second in all, open loop (message i is due at
     start + i / rate, whoever sends it, and its latency counts from then, so a server that falls behind
     is charged for the wait), each by one talker into its chat; delivery timed from when it was due to
     the recipient's realtime frame;
  4. the crowd connected: `--crowd` idle realtime clients from a second process (`hold` below; one
     process holds at most 20,000 descriptors here), the server's RSS before and after;
  5. with the crowd: the same load as 3.

Before 3, `--idle-seconds` with the talkers connected and nothing sent: the server's (and PostgreSQL's) cores then,
the part of a phase's cost per message that is time passing (timers, polls, heartbeats), not messages.

For each phase: delivery p50/p99 over every message, messages never delivered, the server's CPU (and
PostgreSQL's, when `--postgres` is given) per delivered message. Prints one `RESULT {json}` line;
Benchmarks/messenger/run.sh --crowd starts the servers and prints the ratios.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time

import aiohttp
import websockets

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import Gatehouse, Synapse, gather_limited, percentile, rss_kib  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from proccpu import postgres_pids, process_seconds  # noqa: E402

SOURCES = [f"127.0.0.{2 + i}" for i in range(8)]  # so one source address's ports are not the limit


def cpu_seconds(pids: list[int]) -> float:
    return sum(process_seconds(pid) for pid in pids)


# MARK: - the crowd, held by a process of its own

async def hold(args) -> None:
    """Connects every client named in --tokens (one per line: token), prints `CONNECTED n`, holds them
    until standard input closes, prints `STILL_OPEN n`."""
    tokens = [line.strip() for line in open(args.tokens) if line.strip()]
    held = []
    stop = asyncio.Event()
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as http:
        server = Gatehouse(args.url, http) if args.target == "gatehouse" else Synapse(args.url, http, "")
        semaphore = asyncio.Semaphore(128)
        opened = 0

        async def one(index: int, token: str) -> None:
            nonlocal opened
            async with semaphore:
                if args.target == "gatehouse":
                    ws_url = args.url.replace("http://", "ws://") + "/v1/realtime"
                    ws = await websockets.connect(ws_url, additional_headers={"Authorization": f"Bearer {token}"},
                                                  local_addr=(SOURCES[index % len(SOURCES)], 0), ping_interval=None,
                                                  compression=None, max_queue=4, open_timeout=120)
                    first = json.loads(await ws.recv())
                    if first.get("type") != "ready":
                        raise RuntimeError(f"not ready: {first}")
                    held.append(ws)
                else:
                    connected = asyncio.Event()
                    held.append(asyncio.create_task(server.idle({"token": token}, connected, stop)))
                    await connected.wait()
                opened += 1
                if opened % 2000 == 0:
                    print(f"  crowd: {opened} connected", file=sys.stderr, flush=True)

        await asyncio.gather(*(one(i, t) for i, t in enumerate(tokens)))
        print(f"CONNECTED {len(held)}", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
        if args.target == "gatehouse":
            print(f"STILL_OPEN {sum(1 for ws in held if ws.state.name == 'OPEN')}", flush=True)
        else:
            print(f"STILL_OPEN {sum(1 for task in held if not task.done())}", flush=True)
            stop.set()


# MARK: - the talkers

def request_bytes(target: str, token: str, room: str, text: str, cid: str) -> bytes:
    if target == "gatehouse":
        line = f"POST /v1/chats/{room}/messages HTTP/1.1"
        body = json.dumps({"text": text, "clientMessageId": cid}).encode()
    else:
        line = f"PUT /_matrix/client/v3/rooms/{room}/send/m.room.message/{cid} HTTP/1.1"
        body = json.dumps({"msgtype": "m.text", "body": text}).encode()
    return (f"{line}\r\nHost: bench\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


async def read_response(reader: asyncio.StreamReader) -> int:
    status = int((await reader.readline()).split()[1])
    length, chunked = 0, False
    while (line := await reader.readline()) not in (b"\r\n", b""):
        name = line.split(b":", 1)[0].strip().lower()
        if name == b"content-length":
            length = int(line.split(b":", 1)[1])
        elif name == b"transfer-encoding" and b"chunked" in line.lower():
            chunked = True
    if chunked:
        while (size := int((await reader.readline()).strip() or b"0", 16)) > 0:
            await reader.readexactly(size + 2)
        await reader.readline()
    else:
        await reader.readexactly(length)
    return status


class Talk:
    """The talkers' realtime clients, and the paced sends through a pool of keep-alive connections."""

    def __init__(self, target: str, url: str, server, talkers: list[dict], rooms: list[str], senders: int):
        self.target, self.url, self.server = target, url, server
        self.talkers, self.rooms, self.senders = talkers, rooms, senders
        self.due: dict[str, tuple[float, int]] = {}  # text → (when it was due, the recipient's index)
        self.latencies: list[float] = []

    def received(self, listener: int, text: str) -> None:
        entry = self.due.get(text)
        if entry is not None and entry[1] == listener:
            del self.due[text]
            self.latencies.append((time.perf_counter() - entry[0]) * 1000)

    async def connect(self) -> None:
        self.stop = asyncio.Event()
        ready = [asyncio.Event() for _ in self.talkers]
        self.listeners = [asyncio.create_task(self.server.listen(t, lambda text, i=i: self.received(i, text), ready[i], self.stop))
                          for i, t in enumerate(self.talkers)]
        await asyncio.wait_for(asyncio.gather(*(e.wait() for e in ready)), timeout=300)

    async def close(self) -> None:
        self.stop.set()
        for task in self.listeners:
            task.cancel()
        await asyncio.gather(*self.listeners, return_exceptions=True)

    async def run(self, name: str, rate: float, seconds: float, server_pid: int, postgres: bool) -> dict:
        self.due.clear()
        self.latencies = []
        total = int(rate * seconds)
        host, port = self.url.split("//")[1].rstrip("/").split(":")
        state = {"next": 0, "non2xx": 0, "late_ms": []}
        db_pids = postgres_pids() if postgres else []
        cpu_before, db_before = cpu_seconds([server_pid]), cpu_seconds(db_pids)
        start = time.perf_counter() + 0.5

        async def worker() -> None:
            reader, writer = await asyncio.open_connection(host, int(port))
            while state["next"] < total:
                i = state["next"]
                state["next"] += 1
                due = start + i / rate
                delay = due - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
                sender = i % len(self.talkers)
                pair = sender // 2
                recipient = pair * 2 + (1 - sender % 2)
                text = f"{name} {i}"
                self.due[text] = (due, recipient)
                state["late_ms"].append((time.perf_counter() - due) * 1000)
                writer.write(request_bytes(self.target, self.talkers[sender]["token"], self.rooms[pair], text, f"{name}-{i}-{os.getpid()}"))
                if not 200 <= await read_response(reader) < 300:
                    state["non2xx"] += 1
                    self.due.pop(text, None)
            writer.close()

        await asyncio.gather(*(worker() for _ in range(self.senders)))
        took = time.perf_counter() - start
        for _ in range(50):  # the last deliveries
            if not self.due:
                break
            await asyncio.sleep(0.1)
        cpu = cpu_seconds([server_pid]) - cpu_before
        db_cpu = cpu_seconds(db_pids) - db_before
        delivered = len(self.latencies)
        result = {
            "rate": rate, "seconds": seconds, "sent": total - state["non2xx"], "sent_per_s": round(total / took, 1), "non2xx": state["non2xx"],
            "delivered": delivered, "undelivered": len(self.due),
            "p50_ms": round(percentile(self.latencies, 50), 2) if delivered else None,
            "p99_ms": round(percentile(self.latencies, 99), 2) if delivered else None,
            "max_ms": round(max(self.latencies), 2) if delivered else None,
            "send_late_p99_ms": round(percentile(state["late_ms"], 99), 2),
            "server_cpu_ms_per_message": round(1000 * cpu / max(delivered, 1), 3),
            "server_cores": round(cpu / took, 2),
        }
        if postgres:
            result["postgres_cpu_ms_per_message"] = round(1000 * db_cpu / max(delivered, 1), 3)
        print(f"  {name}: {json.dumps(result)}", file=sys.stderr, flush=True)
        return result


async def run(args) -> None:
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=600)) as http:
        server = Gatehouse(args.url, http) if args.target == "gatehouse" else Synapse(args.url, http, args.shared_secret)
        started = time.monotonic()
        talkers = await gather_limited([lambda i=i: server.user(f"{args.prefix}t{i}") for i in range(args.talkers)], 16)
        rooms = await gather_limited([lambda p=p: server.pair(talkers[2 * p], talkers[2 * p + 1]) for p in range(args.talkers // 2)], 16)
        if args.devices:
            # Every talker has a phone, as in an app: each message is a push to compose (a development server keeps them
            # in its outbox).
            await gather_limited([lambda t=t: server.device(t) for t in talkers], 16)
        crowd_users = await gather_limited([lambda i=i: server.user(f"{args.prefix}c{i}") for i in range(args.crowd_accounts)], 32)
        print(f"setup: {len(talkers)} talkers in {len(rooms)} chats, {len(crowd_users)} crowd accounts in {time.monotonic() - started:.0f} s",
              file=sys.stderr, flush=True)

        talk = Talk(args.target, args.url, server, talkers, rooms, args.senders)
        await talk.connect()
        await asyncio.sleep(1)
        # What the server (and PostgreSQL) spend with the talkers connected and nothing sent: the part of a phase's
        # cost per message that is the time passing (timers, polls, heartbeats), not the messages.
        db_pids = postgres_pids() if args.postgres else []
        idle_started, cpu_before, db_before = time.perf_counter(), cpu_seconds([args.server_pid]), cpu_seconds(db_pids)
        await asyncio.sleep(args.idle_seconds)
        idle_took = time.perf_counter() - idle_started
        idle = {"seconds": round(idle_took, 1), "server_cores": round((cpu_seconds([args.server_pid]) - cpu_before) / idle_took, 4)}
        if args.postgres:
            idle["postgres_cores"] = round((cpu_seconds(db_pids) - db_before) / idle_took, 4)
        print(f"  idle: {json.dumps(idle)}", file=sys.stderr, flush=True)
        await talk.run("warm-up", args.rate, min(5, args.seconds), args.server_pid, False)
        phases = {"alone": await talk.run("alone", args.rate, args.seconds, args.server_pid, args.postgres)}

        # The crowd, from a process of its own.
        await asyncio.sleep(2)
        rss_before = rss_kib(args.server_pid)
        with tempfile.NamedTemporaryFile("w", delete=False, suffix=".tokens") as f:
            for i in range(args.crowd):
                f.write(crowd_users[i % len(crowd_users)]["token"] + "\n")
        holder = await asyncio.create_subprocess_exec(
            sys.executable, os.path.abspath(__file__), "hold", "--target", args.target, "--url", args.url, "--tokens", f.name,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
        started = time.monotonic()
        line = (await asyncio.wait_for(holder.stdout.readline(), timeout=900)).decode()
        if not line.startswith("CONNECTED "):
            raise RuntimeError(f"the crowd did not connect: {line!r}")
        crowd = int(line.split()[1])
        connect_seconds = time.monotonic() - started
        await asyncio.sleep(5)
        rss_after = rss_kib(args.server_pid)
        print(f"crowd: {crowd} connected in {connect_seconds:.0f} s, RSS {rss_before} → {rss_after} KiB", file=sys.stderr, flush=True)

        phases["crowd"] = await talk.run("crowd", args.rate, args.seconds, args.server_pid, args.postgres)
        holder.stdin.close()
        still_open = int((await asyncio.wait_for(holder.stdout.readline(), timeout=60)).split()[1])
        await holder.wait()
        await talk.close()
        os.unlink(f.name)

        alone, crowded = phases["alone"], phases["crowd"]
        result = {
            "target": args.target, "talkers": len(talkers), "chats": len(rooms), "crowd": crowd, "crowd_accounts": len(crowd_users),
            "crowd_still_open": still_open, "crowd_connect_seconds": round(connect_seconds, 1),
            "realtime_clients": crowd + len(talkers), "rate": args.rate,
            "rss_before_crowd_kib": rss_before, "rss_with_crowd_kib": rss_after,
            "kib_per_idle_connection": round((rss_after - rss_before) / max(crowd, 1), 2),
            "idle": idle, "alone": alone, "with_crowd": crowded,
            "p99_crowd_vs_alone": round(crowded["p99_ms"] / alone["p99_ms"], 2) if alone["p99_ms"] and crowded["p99_ms"] else None,
        }
        print("RESULT " + json.dumps(result))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", nargs="?", default="run", choices=["run", "hold"])
    parser.add_argument("--target", choices=["gatehouse", "synapse"], required=True)
    parser.add_argument("--url", required=True)
    parser.add_argument("--server-pid", type=int)
    parser.add_argument("--shared-secret", default="")
    parser.add_argument("--talkers", type=int, default=1000, help="talking clients, two to a chat")
    parser.add_argument("--crowd", type=int, default=18000, help="idle realtime clients connected for the second phase")
    parser.add_argument("--crowd-accounts", type=int, default=18000, help="accounts the crowd is spread over")
    parser.add_argument("--rate", type=float, default=1000, help="messages a second, all talkers together")
    parser.add_argument("--seconds", type=float, default=20, help="length of each measured phase")
    parser.add_argument("--idle-seconds", type=float, default=10, help="the talkers connected and nothing sent, measured before the phases")
    parser.add_argument("--senders", type=int, default=64, help="keep-alive HTTP connections the sends go through")
    parser.add_argument("--postgres", action="store_true", help="also count PostgreSQL's CPU per message")
    parser.add_argument("--devices", action="store_true", help="Gatehouse: every talker registers a push device")
    parser.add_argument("--tokens", help="hold: the crowd's tokens, one a line")
    parser.add_argument("--prefix", default="k" + os.urandom(3).hex())
    args = parser.parse_args()
    asyncio.run(hold(args) if args.mode == "hold" else run(args))


if __name__ == "__main__":
    main()
