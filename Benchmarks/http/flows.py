"""The load tool for flows wrk cannot script: registration end to end (code request, reading the
code from the development outbox, register, login), on persistent HTTP/1.1 connections.

Standard library only. Used by bench.py; runnable alone:

    python3 Benchmarks/http/flows.py --port 8080 --workers 8 --seconds 20
"""
import argparse
import asyncio
import json
import random
import statistics
import time
import urllib.parse


class Connection:
    """One keep-alive HTTP/1.1 connection; requests on it go one after another."""

    def __init__(self, host, port):
        self.host, self.port = host, port
        self.reader = self.writer = None

    async def request(self, method, path, form=None, headers=None):
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        body = urllib.parse.urlencode(form).encode() if form is not None else b""
        lines = [f"{method} {path} HTTP/1.1", f"Host: {self.host}:{self.port}", f"Content-Length: {len(body)}"]
        if form is not None:
            lines.append("Content-Type: application/x-www-form-urlencoded")
        for name, value in (headers or {}).items():
            lines.append(f"{name}: {value}")
        self.writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        await self.writer.drain()
        status_line = await self.reader.readuntil(b"\r\n")
        status = int(status_line.split()[1])
        length, chunked = 0, False
        while True:
            line = await self.reader.readuntil(b"\r\n")
            if line == b"\r\n":
                break
            name, _, value = line.decode("latin-1").partition(":")
            name = name.strip().lower()
            if name == "content-length":
                length = int(value.strip())
            elif name == "transfer-encoding" and "chunked" in value.lower():
                chunked = True
        if chunked:
            data = b""
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).strip(), 16)
                chunk = await self.reader.readexactly(size + 2)
                if size == 0:
                    break
                data += chunk[:-2]
        else:
            data = await self.reader.readexactly(length)
        return status, data

    def close(self):
        if self.writer is not None:
            self.writer.close()
            self.writer = None


class FlowError(Exception):
    pass


def expect(status, data, wanted, step):
    if status != wanted:
        raise FlowError(f"{step}: HTTP {status}: {data[:200]!r}")


async def register_once(conn, phone):
    """Code request, code from the dev outbox, register, login. Returns (login, password, token)."""
    status, data = await conn.request("POST", "/api/users/sms", form={"phone": phone})
    expect(status, data, 200, "sms")
    status, data = await conn.request("GET", "/dev/outbox?" + urllib.parse.urlencode({"to": phone, "last": 1}))
    expect(status, data, 200, "outbox")
    code = json.loads(data)[0]["code"]
    status, data = await conn.request("POST", "/api/users/register", form={"phone": phone, "code": code, "name": "Bench"})
    expect(status, data, 200, "register")
    credentials = json.loads(data)
    status, data = await conn.request("POST", "/api/auth/login", form={"login": credentials["login"], "password": credentials["password"]})
    expect(status, data, 200, "login")
    return credentials["login"], credentials["password"], json.loads(data)["token"]


def phone_numbers(seed=None):
    """Distinct Russian mobile numbers from a random start, so reruns on one database don't collide."""
    rng = random.Random(seed)
    start = rng.randrange(0, 10**9 - 10**7)
    n = 0
    while True:
        yield f"+79{start + n:09d}"
        n += 1


async def registration_load(host, port, workers, seconds, warmup=2.0):
    """Runs `workers` clients registering accounts for warmup + seconds; counts flows that
    completed inside the measured window. Returns a dict of figures."""
    numbers = phone_numbers()
    t0 = time.monotonic()
    measure_from, stop_at = t0 + warmup, t0 + warmup + seconds
    done, latencies, errors = [0], [], []

    async def worker():
        conn = Connection(host, port)
        try:
            while time.monotonic() < stop_at:
                started = time.monotonic()
                try:
                    await register_once(conn, next(numbers))
                except (FlowError, OSError, asyncio.IncompleteReadError) as e:
                    errors.append(str(e))
                    conn.close()
                    continue
                finished = time.monotonic()
                if measure_from <= started and finished <= stop_at:
                    done[0] += 1
                    latencies.append(finished - started)
        finally:
            conn.close()

    await asyncio.gather(*(worker() for _ in range(workers)))
    latencies.sort()
    p = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000 if latencies else float("nan")
    return {
        "workers": workers, "seconds": seconds, "registrations": done[0],
        "per_second": done[0] / seconds, "p50_ms": p(0.50), "p99_ms": p(0.99),
        "median_ms": statistics.median(latencies) * 1000 if latencies else float("nan"),
        "errors": len(errors), "first_error": errors[0] if errors else None,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=20)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(registration_load(args.host, args.port, args.workers, args.seconds))))


if __name__ == "__main__":
    main()
