"""Gatehouse HTTP benchmarks against its own plaintext route and against two peers, in one run.

Run through run.sh (it builds the release binary and installs wrk). Every measurement is taken
`--runs` times, round-robin over the targets so drift touches all of them alike, and the median
is reported. Load comes from separate processes on loopback: wrk for single requests, flows.py
for the registration flow.

    1. read      token-authenticated read of the current account vs the plaintext route vs the peers
    2. login     password logins/s vs the bcrypt bound, and a cheap endpoint's p99 during them
    3. register  code request + register + login, end to end, per second
    5. startup   time to first answered request and idle resident memory
(4, the WebSocket gateway, is Benchmarks/websocket-gateway/run.sh.)
"""
import argparse
import asyncio
import datetime
import http.client
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import flows  # noqa: E402
sys.path.insert(0, os.path.dirname(HERE))
from proccpu import Meter  # noqa: E402

PEER_SCRIPT = os.path.join(ROOT, "Benchmarks", "peers", "peer.sh")
HOST = "127.0.0.1"


def log(*args):
    print(*args, file=sys.stderr, flush=True)


# --- processes ---------------------------------------------------------------------------------

def wait_http(port, path="/health/live", timeout=60.0, proc=None, interval=0.005):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            c = http.client.HTTPConnection(HOST, port, timeout=2)
            c.request("GET", path)
            if c.getresponse().status == 200:
                c.close()
                return
            c.close()
        except OSError:
            pass
        time.sleep(interval)
    raise RuntimeError(f"no answer on port {port}{path} within {timeout}s")


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class Floor:
    """The bare Hummingbird route (the http-floor product), in its own process."""

    def __init__(self, binary, port, workdir):
        self.port = port
        self.log = open(os.path.join(workdir, f"floor-{port}.log"), "ab")
        self.proc = subprocess.Popen([binary, str(port)], stdout=self.log, stderr=self.log)
        wait_http(port, proc=self.proc)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(20)


class Gatehouse:
    """One `gatehouse serve` process on a fresh database."""

    def __init__(self, binary, engine, port, workdir, postgres_url, cost, log_level, database_url=None, extra_env=None):
        self.binary, self.engine, self.port, self.cost = binary, engine, port, cost
        self.workdir = workdir
        if database_url:  # a second process on another one's database
            self.database_url = database_url
        elif engine == "sqlite":
            self.database_url = os.path.join(workdir, "gatehouse-bench.sqlite")
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(self.database_url + suffix):
                    os.remove(self.database_url + suffix)
        else:
            self.database_url = fresh_postgres_database(postgres_url, "bench_gatehouse")
        self.env = dict(os.environ,
                        DATABASE_URL=self.database_url, GATEHOUSE_PORT=str(port), GATEHOUSE_HOST=HOST,
                        GATEHOUSE_LOG_LEVEL=log_level, GATEHOUSE_BCRYPT_COST=str(cost),
                        GATEHOUSE_DELIVERY_WAIT_SECONDS="0",
                        # Every registration comes from one address: the per-address budgets would
                        # (rightly) stop a real client doing this.
                        GATEHOUSE_CODE_REQUESTS_PER_IP="100000", GATEHOUSE_CODE_RESEND_SECONDS="0",
                        GATEHOUSE_CODE_REQUESTS_PER_IP_PER_DESTINATION="100000",
                        GATEHOUSE_HTTP_MAX_CONNECTIONS_PER_ADDRESS="1000000", **(extra_env or {}))
        self.proc = None

    def start(self):
        self.log = open(os.path.join(self.workdir, f"gatehouse-{self.engine}-{self.port}.log"), "ab")
        started = time.monotonic()
        self.proc = subprocess.Popen([self.binary, "serve"], env=self.env, stdout=self.log, stderr=self.log)
        wait_http(self.port, proc=self.proc)
        return time.monotonic() - started

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None


def fresh_postgres_database(base_url, name):
    parsed = urllib.parse.urlparse(base_url)
    admin = parsed._replace(path="/postgres").geturl()
    for sql in (f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)', f'CREATE DATABASE "{name}"'):
        subprocess.run(["psql", admin, "-q", "-c", sql], check=True, stdout=subprocess.DEVNULL)
    return parsed._replace(path="/" + name).geturl()


def http_call(port, method, path, form=None, headers=None):
    c = http.client.HTTPConnection(HOST, port, timeout=30)
    body = urllib.parse.urlencode(form) if form is not None else None
    hdrs = dict(headers or {})
    if form is not None:
        hdrs["Content-Type"] = "application/x-www-form-urlencoded"
    c.request(method, path, body=body, headers=hdrs)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data


def gatehouse_account(port):
    """Registers one account through the API and returns (login, password, token)."""
    async def go():
        conn = flows.Connection(HOST, port)
        try:
            return await flows.register_once(conn, next(flows.phone_numbers()))
        finally:
            conn.close()
    login, password, token = asyncio.run(go())
    status, data = http_call(port, "GET", "/api/users/user", headers={"Authorization": f"Bearer {token}"})
    if status != 200 or json.loads(data)["phone"] != login:
        raise RuntimeError(f"authenticated read failed: {status} {data[:200]!r}")
    return login, password, token


# --- wrk -----------------------------------------------------------------------------------------

def wrk(url, connections, seconds, headers=(), threads=2, env=None, meter=None):
    """One wrk run; with a meter, also the processor time per request of the processes it watches."""
    before = meter.sample() if meter else None
    cmd = ["wrk", f"-t{min(threads, connections)}", f"-c{connections}", f"-d{seconds}s", "--latency",
           "-s", os.path.join(HERE, "report.lua")]
    for h in headers:
        cmd += ["-H", h]
    cmd.append(url)
    out = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, **(env or {})), check=True).stdout
    for line in out.splitlines():
        if line.startswith("WRK_JSON "):
            result = json.loads(line[len("WRK_JSON "):])
            errors = result["non2xx"] + result["connect_errors"] + result["read_errors"] + result["write_errors"] + result["timeouts"]
            if errors:
                raise RuntimeError(f"wrk saw {errors} failed requests on {url}: {result}\n{out}")
            if meter:
                cost = meter.since(before, result["requests"])
                result["server_us"] = cost["server_ms"] * 1000
                if "postgres_ms" in cost:
                    result["postgres_us"] = cost["postgres_ms"] * 1000
            return result
    raise RuntimeError(f"no summary from wrk:\n{out}")


def median_of(results, key):
    return statistics.median(r[key] for r in results)


# --- 1: authenticated read ----------------------------------------------------------------------

FLOOR = "hummingbird floor GET /health/live"


def bench_read(args, engine, gh, token, peers, uncached=None, floor=None):
    """Each target: (name, port, path, headers, meter or None). The meters read the processor time per
    request of the server (and PostgreSQL's) from /proc."""
    server = Meter(gh.proc.pid, postgres=engine == "postgres")
    targets = [("gatehouse plaintext GET /health/live", gh.port, "/health/live", [], server),
               ("gatehouse GET /api/users/user", gh.port, "/api/users/user", [f"Authorization: Bearer {token}"], server),
               ("gatehouse GET /v1/me", gh.port, "/v1/me", [f"Authorization: Bearer {token}"], server)]
    if floor:
        targets.insert(0, (FLOOR, floor.port, "/health/live", [], Meter(floor.proc.pid, postgres=False)))
    if uncached:
        # The same read from a second process on the same database with the session cache off:
        # what every request costs when no copy is fresh (many users, each reading rarely).
        targets.append(("gatehouse, session cache off, GET /api/users/user", uncached.port, "/api/users/user", [f"Authorization: Bearer {token}"],
                        Meter(uncached.proc.pid, postgres=engine == "postgres")))
    for name, port, path, header in peers:
        targets.append((f"{name} GET {path}", port, path, [header], None))
    results = {}
    for connections in args.connections:
        for name, port, path, headers, _ in targets:  # warm-up, discarded
            wrk(f"http://{HOST}:{port}{path}", connections, args.warmup, headers)
        runs = {name: [] for name, *_ in targets}
        for _ in range(args.runs):
            for name, port, path, headers, meter in targets:
                runs[name].append(wrk(f"http://{HOST}:{port}{path}", connections, args.duration, headers, meter=meter))
        for name, *_ in targets:
            keys = ["rps", "p50_ms", "p99_ms"] + [k for k in ("server_us", "postgres_us") if k in runs[name][0]]
            results[(name, connections)] = {k: median_of(runs[name], k) for k in keys}
            r = results[(name, connections)]
            cost = f"  {r['server_us']:6.1f} µs server" if "server_us" in r else ""
            cost += f" + {r['postgres_us']:5.1f} µs PostgreSQL" if "postgres_us" in r else ""
            log(f"  [{engine}] c={connections:<3} {name:<55} {r['rps']:>9.0f} req/s  p50 {r['p50_ms']:6.2f} ms  p99 {r['p99_ms']:6.2f} ms{cost} per request")
    return targets, results


# --- 2: login -------------------------------------------------------------------------------------

def bcrypt_seconds(binary, cost):
    out = subprocess.run([binary, "bcrypt-speed", "--cost", str(cost), "--count", "20"], capture_output=True, text=True, check=True).stdout
    # "bcrypt cost 10: 38.20 ms per hash, …"
    return float(out.split(":")[1].split("ms")[0]) / 1000, out.strip()


def bench_login(args, engine, gh, login, password, token):
    # Logins spread over 32 accounts: more than GATEHOUSE_LOGIN_FAILURES_PER_ACCOUNT (10) attempts
    # in flight for one account are refused by design (docs/decisions.md).
    accounts = [(login, password)] + [gatehouse_account(gh.port)[:2] for _ in range(31)]
    bodies = "\n".join(urllib.parse.urlencode({"login": l, "password": p}) for l, p in accounts)
    login_env = {"WRK_METHOD": "POST", "WRK_BODIES": bodies, "WRK_CONTENT_TYPE": "application/x-www-form-urlencoded"}
    url = f"http://{HOST}:{gh.port}/api/auth/login"
    cheap = [("GET /health/live", f"http://{HOST}:{gh.port}/health/live", []),
             ("GET /api/users/user", f"http://{HOST}:{gh.port}/api/users/user", [f"Authorization: Bearer {token}"])]
    wrk(url, 16, args.warmup, env=login_env)
    runs, idle, loaded = [], {n: [] for n, *_ in cheap}, {n: [] for n, *_ in cheap}
    for _ in range(args.runs):
        for name, curl, headers in cheap:  # the cheap endpoint alone, at 4 connections
            idle[name].append(wrk(curl, 4, min(args.duration, 5), headers, threads=1))
        runs.append(wrk(url, 16, args.duration, env=login_env))
        # The same cheap endpoints while 16 connections keep logging in.
        for name, curl, headers in cheap:
            background = subprocess.Popen(
                ["wrk", "-t1", "-c16", f"-d{args.duration}s", "-s", os.path.join(HERE, "report.lua"), url],
                env=dict(os.environ, **login_env), stdout=subprocess.PIPE, text=True)
            time.sleep(1.5)
            loaded[name].append(wrk(curl, 4, max(2, args.duration - 3), headers, threads=1))
            background.communicate()
    seconds, line = bcrypt_seconds(gh.binary, gh.cost)
    cores = os.cpu_count()
    result = {
        "logins_per_s": median_of(runs, "rps"), "login_p50_ms": median_of(runs, "p50_ms"), "login_p99_ms": median_of(runs, "p99_ms"),
        "bcrypt_ms": seconds * 1000, "bcrypt_line": line, "bound_per_s": cores / seconds,
        "cheap": {n: {"idle_p99_ms": median_of(idle[n], "p99_ms"), "idle_p50_ms": median_of(idle[n], "p50_ms"),
                      "loaded_p99_ms": median_of(loaded[n], "p99_ms"), "loaded_p50_ms": median_of(loaded[n], "p50_ms"),
                      "loaded_rps": median_of(loaded[n], "rps")} for n, *_ in cheap},
    }
    log(f"  [{engine}] logins {result['logins_per_s']:.1f}/s (p99 {result['login_p99_ms']:.0f} ms); bound {result['bound_per_s']:.1f}/s ({line})")
    for n, r in result["cheap"].items():
        log(f"  [{engine}] {n} p99 idle {r['idle_p99_ms']:.2f} ms, during logins {r['loaded_p99_ms']:.2f} ms")
    return result


# --- 3: registration ------------------------------------------------------------------------------

def bench_register(args, engine, gh):
    runs = [asyncio.run(flows.registration_load(HOST, gh.port, args.register_workers, args.duration)) for _ in range(args.runs)]
    for r in runs:
        if r["errors"]:
            raise RuntimeError(f"registration errors: {r['errors']}, first: {r['first_error']}")
    seconds, line = bcrypt_seconds(gh.binary, gh.cost)
    result = {"per_second": median_of(runs, "per_second"), "p50_ms": median_of(runs, "p50_ms"), "p99_ms": median_of(runs, "p99_ms"),
              "workers": args.register_workers,
              # Two bcrypt operations per flow: hashing the new password, verifying it at login.
              "bound_per_s": os.cpu_count() / (2 * seconds)}
    log(f"  [{engine}] registrations {result['per_second']:.1f}/s (p50 {result['p50_ms']:.0f} ms, p99 {result['p99_ms']:.0f} ms); "
        f"bcrypt bound {result['bound_per_s']:.1f}/s")
    return result


# --- 5: start-up ------------------------------------------------------------------------------------

def bench_startup(args, engine, binary, workdir, postgres_url, port):
    fresh, warm, rss_start, rss_idle = [], [], [], []
    for _ in range(args.runs + 2):
        gh = Gatehouse(binary, engine, port, workdir, postgres_url, args.cost, args.log_level)
        fresh.append(gh.start())  # a fresh database: migrations run first
        gh.stop()
        t = gh.start()            # the same database again: the usual restart
        warm.append(t)
        rss_start.append(rss_kib(gh.proc.pid))
        time.sleep(2)
        rss_idle.append(rss_kib(gh.proc.pid))
        gh.stop()
    result = {"fresh_ms": statistics.median(fresh) * 1000, "restart_ms": statistics.median(warm) * 1000,
              "rss_at_start_mib": statistics.median(rss_start) / 1024, "rss_idle_mib": statistics.median(rss_idle) / 1024}
    log(f"  [{engine}] first answer: {result['restart_ms']:.0f} ms (fresh database with migrations: {result['fresh_ms']:.0f} ms); "
        f"idle RSS {result['rss_idle_mib']:.1f} MiB")
    return result


# --- report ------------------------------------------------------------------------------------------

def machine():
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = 0
    with open("/proc/meminfo") as f:
        mem = int(f.readline().split()[1]) // 1024 // 1024
    wrk_version = subprocess.run(["wrk", "-v"], capture_output=True, text=True).stdout.splitlines()[0] if shutil.which("wrk") else "?"
    return f"{cpu}, {os.cpu_count()} cores, {mem} GiB, {platform.system()} {platform.release()}; {wrk_version}"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--binary", required=True)
    p.add_argument("--floor", help="the http-floor binary: the bare Hummingbird route every request is compared with")
    p.add_argument("--engines", default="sqlite,postgres")
    p.add_argument("--only", default="read,login,register,startup")
    p.add_argument("--peers", default="allauth,fastapi-users", help="comma list, or 'none'")
    p.add_argument("--postgres-url", default=os.environ.get("POSTGRES_URL", "postgres://postgres@127.0.0.1:55432/gatehouse_test"))
    p.add_argument("--duration", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--connections", default="16,64")
    p.add_argument("--cost", type=int, default=int(os.environ.get("BCRYPT_COST", "10")))
    p.add_argument("--register-workers", type=int, default=8)
    p.add_argument("--log-level", default="warning", help="the server's GATEHOUSE_LOG_LEVEL (info logs a line per request)")
    p.add_argument("--port", type=int, default=19000)
    p.add_argument("--json", help="also write the figures here")
    args = p.parse_args()
    args.connections = [int(c) for c in args.connections.split(",")]
    only = set(args.only.split(","))
    peers = [] if args.peers == "none" else args.peers.split(",")
    workdir = tempfile.mkdtemp(prefix="gatehouse-bench-")
    report = {"machine": machine(), "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "settings": {k: v for k, v in vars(args).items() if k not in ("binary", "json")}, "engines": {}}
    log(f"machine: {report['machine']}")
    log(f"work dir: {workdir}")

    for engine in args.engines.split(","):
        er = report["engines"][engine] = {}
        log(f"== {engine}")
        if "startup" in only:
            er["startup"] = bench_startup(args, engine, args.binary, workdir, args.postgres_url, args.port + 9)
        if not only & {"read", "login", "register"}:
            continue
        gh = Gatehouse(args.binary, engine, args.port, workdir, args.postgres_url, args.cost, args.log_level)
        gh.start()
        peer_procs = []
        try:
            login, password, token = gatehouse_account(gh.port)
            if "read" in only:
                peer_targets = []
                for i, name in enumerate(peers):
                    port = args.port + 1 + i
                    db = f"sqlite:{workdir}/peer-{name}.sqlite" if engine == "sqlite" else args.postgres_url
                    pid = subprocess.run(["bash", PEER_SCRIPT, "start", name, "--db", db, "--port", str(port)],
                                         capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]
                    peer_procs.append(pid)
                    prepared = json.loads(subprocess.run(["bash", PEER_SCRIPT, "prepare", name, "--port", str(port)],
                                                         capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1])
                    peer_targets.append((name, port, prepared["path"], prepared["header"]))
                uncached = Gatehouse(args.binary, engine, args.port + 5, workdir, args.postgres_url, args.cost, args.log_level,
                                     database_url=gh.database_url, extra_env={"GATEHOUSE_SESSION_CACHE_SECONDS": "0"})
                uncached.start()
                floor = Floor(args.floor, args.port + 6, workdir) if args.floor else None
                try:
                    targets, results = bench_read(args, engine, gh, token, peer_targets, uncached=uncached, floor=floor)
                finally:
                    uncached.stop()
                    if floor:
                        floor.stop()
                for pid in peer_procs:
                    subprocess.run(["bash", PEER_SCRIPT, "stop", pid], check=False)
                peer_procs = []
                er["read"] = {f"{name} @{c}": r for (name, c), r in results.items()}
                summary = []
                for c in args.connections:
                    plain = results[("gatehouse plaintext GET /health/live", c)]
                    read = results[("gatehouse GET /api/users/user", c)]
                    me = results[("gatehouse GET /v1/me", c)]
                    line = {"connections": c, "read_rps": read["rps"], "plaintext_rps": plain["rps"],
                            "read_vs_plaintext": read["rps"] / plain["rps"], "read_p99_ms": read["p99_ms"],
                            "me_rps": me["rps"], "me_vs_plaintext": me["rps"] / plain["rps"], "me_p99_ms": me["p99_ms"],
                            "cost_us": {n: {k: r[k] for k in ("server_us", "postgres_us") if k in r}
                                        for (n, cc), r in results.items() if cc == c and "server_us" in r}}
                    if (FLOOR, c) in results:
                        f = results[(FLOOR, c)]
                        line.update(floor_rps=f["rps"], plaintext_vs_floor=plain["rps"] / f["rps"], me_vs_floor=me["rps"] / f["rps"],
                                    plaintext_cost_vs_floor=plain["server_us"] / f["server_us"], me_cost_vs_floor=me["server_us"] / f["server_us"])
                    uncached = results.get(("gatehouse, session cache off, GET /api/users/user", c))
                    if uncached:
                        line.update(uncached_rps=uncached["rps"], uncached_p99_ms=uncached["p99_ms"])
                    peer_rps = {name: results[(f"{name} GET {path}", c)]["rps"] for name, _, path, _ in peer_targets}
                    if peer_rps:
                        best = max(peer_rps, key=peer_rps.get)
                        line.update(fastest_peer=best, fastest_peer_rps=peer_rps[best], read_vs_fastest_peer=read["rps"] / peer_rps[best])
                    summary.append(line)
                er["read_summary"] = summary
            if "login" in only:
                er["login"] = bench_login(args, engine, gh, login, password, token)
            if "register" in only:
                er["register"] = bench_register(args, engine, gh)
        finally:
            for pid in peer_procs:
                subprocess.run(["bash", PEER_SCRIPT, "stop", pid], check=False)
            gh.stop()

    print_report(report)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)


def print_report(report):
    print(f"\nGatehouse HTTP benchmarks, {report['date']}")
    print(f"machine: {report['machine']}")
    s = report["settings"]
    print(f"medians of {s['runs']} runs of {s['duration']} s (warm-up {s['warmup']} s); bcrypt cost {s['cost']}; server log level {s['log_level']}")
    for engine, er in report["engines"].items():
        print(f"\n[{engine}]")
        if "read" in er:
            print(f"  {'target':<60} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'server µs':>10} {'PG µs':>7}  (processor time per request)")
            for name, r in er["read"].items():
                print(f"  {name:<60} {r['rps']:>9.0f} {r['p50_ms']:>8.2f} {r['p99_ms']:>8.2f}"
                      + (f" {r['server_us']:>10.1f}" if "server_us" in r else f" {'':>10}")
                      + (f" {r['postgres_us']:>7.1f}" if "postgres_us" in r else ""))
            for line in er["read_summary"]:
                text = (f"  c={line['connections']}: authenticated read {line['read_rps']:.0f} req/s = "
                        f"{100 * line['read_vs_plaintext']:.0f}% of plaintext (goal ≥ 50%)")
                if "fastest_peer" in line:
                    text += f", {line['read_vs_fastest_peer']:.1f}× {line['fastest_peer']} (goal ≥ 30×)"
                text += f", p99 {line['read_p99_ms']:.2f} ms (goal ≤ 10 ms)"
                print(text)
                print(f"  c={line['connections']}: GET /v1/me {line['me_rps']:.0f} req/s = {100 * line['me_vs_plaintext']:.0f}% of plaintext "
                      f"(goal ≥ 70%), p99 {line['me_p99_ms']:.2f} ms")
                if "floor_rps" in line:
                    print(f"  c={line['connections']}: against the bare Hummingbird route ({line['floor_rps']:.0f} req/s): plaintext "
                          f"{100 * line['plaintext_vs_floor']:.0f}% (goal ≥ 85%), GET /v1/me {100 * line['me_vs_floor']:.0f}% (goal ≥ 70%)")
                    print(f"  c={line['connections']}: processor time per request, server (+ PostgreSQL): "
                          + "; ".join(f"{n} {v['server_us']:.1f} µs" + (f" (+ {v['postgres_us']:.1f})" if "postgres_us" in v else "")
                                      for n, v in line["cost_us"].items()))
                    print(f"  c={line['connections']}: cost against the floor's: plaintext {line['plaintext_cost_vs_floor']:.2f}×, "
                          f"GET /v1/me {line['me_cost_vs_floor']:.2f}×")
                if "uncached_rps" in line:
                    print(f"  c={line['connections']}: with the session cache off {line['uncached_rps']:.0f} req/s = "
                          f"{100 * line['uncached_rps'] / line['plaintext_rps']:.0f}% of plaintext, p99 {line['uncached_p99_ms']:.2f} ms")
        if "login" in er:
            l = er["login"]
            print(f"  login: {l['logins_per_s']:.1f}/s = {100 * l['logins_per_s'] / l['bound_per_s']:.0f}% of the bcrypt bound "
                  f"{l['bound_per_s']:.1f}/s ({l['bcrypt_ms']:.1f} ms per hash); login p99 {l['login_p99_ms']:.0f} ms")
            for n, r in l["cheap"].items():
                print(f"  {n} at 4 connections: p99 {r['idle_p99_ms']:.2f} ms idle, {r['loaded_p99_ms']:.2f} ms while logins saturate the CPU")
        if "register" in er:
            r = er["register"]
            print(f"  registration (code + register + login), {r['workers']} clients: {r['per_second']:.1f}/s = "
                  f"{100 * r['per_second'] / r['bound_per_s']:.0f}% of the bcrypt bound {r['bound_per_s']:.1f}/s; p50 {r['p50_ms']:.0f} ms, p99 {r['p99_ms']:.0f} ms")
        if "startup" in er:
            st = er["startup"]
            print(f"  start-up to first answer: {st['restart_ms']:.0f} ms ({st['fresh_ms']:.0f} ms on a fresh database, migrations included); "
                  f"RSS {st['rss_at_start_mib']:.1f} MiB at first answer, {st['rss_idle_mib']:.1f} MiB idle")


if __name__ == "__main__":
    main()
