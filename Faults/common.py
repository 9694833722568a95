"""Shared pieces of the fault harness: a tiny asyncio HTTP client, gatehouse processes,
the harness's own PostgreSQL, direct database inspection and PASS/FAIL reporting.

Standard library only (Python 3.9+), so the harness runs wherever a `python3` does.
"""
from __future__ import annotations

import asyncio
import json
import os
import shlex
import signal
import sqlite3
import statistics
import subprocess
import tempfile
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Optional

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Ports this harness may use: 19200-19299 (the brief's range).
PORT_BASE = 19200


def log(message: str) -> None:
    print(message, flush=True)


def now() -> float:
    return time.monotonic()


# ---------------------------------------------------------------------------------------------
# Results


@dataclass
class Result:
    name: str
    passed: bool
    figures: dict = field(default_factory=dict)
    problems: list = field(default_factory=list)
    known: list = field(default_factory=list)   # known server issues seen, not counted (FAULTS_STRICT=1 counts them)

    def line(self) -> str:
        figures = " ".join(f"{k}={v}" for k, v in self.figures.items())
        return f"{'PASS' if self.passed else 'FAIL'} {self.name}: {figures}"


class Checker:
    """Collects failed expectations of one test, so a test reports every problem it saw."""

    def __init__(self, name: str):
        self.name = name
        self.problems: list[str] = []
        self.figures: dict[str, Any] = {}
        self.known: list[str] = []

    def expect(self, condition: bool, problem: str) -> bool:
        if not condition:
            self.problems.append(problem)
            log(f"  problem: {problem}")
        return condition

    def known_issue(self, condition: bool, note: str) -> bool:
        """A known server issue (docs/reliability.md): reported, but a failure only with FAULTS_STRICT=1."""
        if condition:
            return True
        if strict():
            return self.expect(False, note)
        self.known.append(note)
        log(f"  known issue: {note}")
        return False

    def result(self) -> Result:
        return Result(self.name, not self.problems, self.figures, self.problems, self.known)


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def ms(seconds: Optional[float]) -> str:
    return "n/a" if seconds is None else f"{seconds * 1000:.0f}ms"


# ---------------------------------------------------------------------------------------------
# HTTP


class NotSent(Exception):
    """The connection was refused: the server never saw the request."""


class NoAnswer(Exception):
    """The request may have reached the server, but no complete answer came back."""


class Hang(NoAnswer):
    """No answer within the client's timeout."""


@dataclass
class Response:
    status: int
    headers: dict
    body: bytes
    elapsed: float

    def json(self):
        return json.loads(self.body.decode() or "null")

    @property
    def text(self) -> str:
        return self.body.decode(errors="replace")


async def http(method: str, port: int, path: str, *, json_body=None, form=None, token: Optional[str] = None,
               headers: Optional[dict] = None, timeout: float = 10.0) -> Response:
    """One HTTP/1.1 request on a fresh connection (`Connection: close`) to 127.0.0.1:port. A `Hang`
    names the phase it stalled in (connect, send, status line, headers, body) so a report can tell
    a server that never answered from a connection the kernel never completed."""
    start = now()
    phase = ["connect"]
    body = b""
    hdrs = {"Host": f"127.0.0.1:{port}", "Connection": "close", "User-Agent": "gatehouse-faults"}
    if json_body is not None:
        body = json.dumps(json_body).encode()
        hdrs["Content-Type"] = "application/json"
    elif form is not None:
        body = urllib.parse.urlencode(form).encode()
        hdrs["Content-Type"] = "application/x-www-form-urlencoded"
    if token:
        hdrs["Authorization"] = f"Bearer {token}"
    if headers:
        hdrs.update(headers)
    if body or method in ("POST", "PUT", "PATCH"):
        hdrs["Content-Length"] = str(len(body))
    raw = f"{method} {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in hdrs.items()) + "\r\n"

    async def exchange() -> Response:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
        except (ConnectionRefusedError, OSError) as error:
            raise NotSent(f"connect: {error}") from None
        try:
            phase[0] = "send"
            writer.write(raw.encode() + body)
            await writer.drain()
            phase[0] = "status line"
            status_line = await reader.readline()
            if not status_line:
                raise NoAnswer("connection closed before the status line")
            parts = status_line.decode().split(" ", 2)
            status = int(parts[1])
            response_headers: dict[str, str] = {}
            phase[0] = "headers"
            while True:
                line = await reader.readline()
                if not line:
                    raise NoAnswer("connection closed in the headers")
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode().partition(":")
                response_headers[name.strip().lower()] = value.strip()
            phase[0] = "body"
            if "content-length" in response_headers:
                data = await reader.readexactly(int(response_headers["content-length"]))
            elif response_headers.get("transfer-encoding", "").lower() == "chunked":
                data = b""
                while True:
                    size = int((await reader.readline()).split(b";")[0].strip() or b"0", 16)
                    if size == 0:
                        await reader.readline()
                        break
                    data += await reader.readexactly(size)
                    await reader.readline()
            else:
                data = await reader.read()
            return Response(status, response_headers, data, now() - start)
        except (ConnectionError, asyncio.IncompleteReadError, ValueError, IndexError) as error:
            raise NoAnswer(f"{type(error).__name__}: {error}") from None
        finally:
            writer.close()
            try:
                await asyncio.wait_for(writer.wait_closed(), 1)
            except Exception:
                pass

    try:
        return await asyncio.wait_for(exchange(), timeout)
    except asyncio.TimeoutError:
        raise Hang(f"no answer within {timeout:.1f}s (stalled in: {phase[0]})") from None


async def outbox_code(port: int, destination: str, timeout: float = 5.0) -> str:
    """The newest one-time code sent to `destination`, from the development outbox."""
    quoted = urllib.parse.quote(destination, safe="@")
    response = await http("GET", port, f"/dev/outbox?to={quoted}&last=1", timeout=timeout)
    if response.status != 200:
        raise RuntimeError(f"/dev/outbox answered {response.status}: {response.text[:200]}")
    messages = response.json()
    if not messages or not messages[0].get("code"):
        raise RuntimeError(f"no code in the outbox for {destination}")
    return messages[0]["code"]


# ---------------------------------------------------------------------------------------------
# gatehouse processes


def gatehouse_binary() -> str:
    path = os.environ.get("GATEHOUSE_BIN")
    if not path:
        try:
            bin_dir = subprocess.run(["swift", "build", "--show-bin-path"], cwd=ROOT, capture_output=True,
                                     text=True, check=True).stdout.strip()
            path = os.path.join(bin_dir, "gatehouse")
        except (OSError, subprocess.CalledProcessError):
            path = os.path.join(ROOT, ".build", "debug", "gatehouse")
    if not os.access(path, os.X_OK):
        raise SystemExit(f"faults: no gatehouse binary at {path} (swift build --package-path Server first)")
    return path


# Limits high enough that the throttles never answer instead of the logic under test
# (as Fuzz/openapi.sh does), cheap bcrypt, no waiting for the first SMS attempt.
RAISED_LIMITS = {
    "GATEHOUSE_LOG_LEVEL": "warning",
    "GATEHOUSE_DELIVERY_WAIT_SECONDS": "0",
    "GATEHOUSE_BCRYPT_COST": "4",
    "GATEHOUSE_CODE_RESEND_SECONDS": "0",
    "GATEHOUSE_CODE_REQUESTS_PER_IP": "100000",
    "GATEHOUSE_SMS_PER_PHONE_PER_DAY": "1000",
    "GATEHOUSE_EMAILS_PER_ADDRESS_PER_DAY": "1000",
    "GATEHOUSE_LOGIN_FAILURES_PER_ACCOUNT": "10000",
    "GATEHOUSE_LOGIN_FAILURES_PER_IP": "1000000",
    "GATEHOUSE_CODE_REQUESTS_PER_IP_PER_DESTINATION": "100000",
    # Every client of the harness is 127.0.0.1.
    "GATEHOUSE_HTTP_MAX_CONNECTIONS_PER_ADDRESS": "100000",
}


class Gatehouse:
    """One `gatehouse serve` process on 127.0.0.1:port against `database_url`."""

    def __init__(self, name: str, port: int, database_url: str, workdir: str, extra_env: Optional[dict] = None):
        assert 19200 <= port <= 19299, port
        self.name = name
        self.port = port
        self.database_url = database_url
        self.workdir = workdir
        self.extra_env = dict(extra_env or {})
        self.process: Optional[subprocess.Popen] = None
        self.starts = 0

    def env(self) -> dict:
        env = {k: v for k, v in os.environ.items()
               if not (k.startswith("GATEHOUSE_") or k.startswith("SMTP_") or k.startswith("SMS_")
                       or k in ("DATABASE_URL", "PUBLIC_URL"))}
        env.update(RAISED_LIMITS)
        env.update({"DATABASE_URL": self.database_url, "GATEHOUSE_HOST": "127.0.0.1", "GATEHOUSE_PORT": str(self.port)})
        env.update(self.extra_env)
        return env

    @property
    def log_path(self) -> str:
        return os.path.join(self.workdir, f"{self.name}.log")

    @property
    def pid(self) -> Optional[int]:
        return self.process.pid if self.process else None

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    async def start(self, ready_timeout: float = 30.0) -> None:
        self.starts += 1
        logfile = open(self.log_path, "a")
        logfile.write(f"--- start #{self.starts} ---\n")
        logfile.flush()
        self.process = subprocess.Popen([gatehouse_binary(), "serve"], cwd=self.workdir, env=self.env(),
                                        stdout=logfile, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        logfile.close()
        deadline = now() + ready_timeout
        while now() < deadline:
            if not self.alive():
                raise RuntimeError(f"{self.name} exited with {self.process.returncode}:\n{self.tail()}")
            try:
                if (await http("GET", self.port, "/health", timeout=2)).status == 200:
                    return
            except NoAnswer:
                pass
            except NotSent:
                pass
            await asyncio.sleep(0.05)
        raise RuntimeError(f"{self.name} not ready within {ready_timeout}s:\n{self.tail()}")

    def kill9(self) -> None:
        if self.alive():
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def stop(self) -> None:
        """SIGTERM (graceful), SIGKILL after 10 s."""
        if not self.alive():
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.kill9()

    def tail(self, lines: int = 30) -> str:
        try:
            with open(self.log_path, errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""


# ---------------------------------------------------------------------------------------------
# The harness's own PostgreSQL (never the one on 55432)


class FaultsPostgres:
    """The throwaway instance `scripts/start-postgres.sh` started for the harness
    (PGPORT/PGDATA from the environment, defaults 55433 and /tmp/gatehouse-pg-faults)."""

    def __init__(self):
        self.port = int(os.environ.get("FAULTS_PGPORT", "55433"))
        self.data = os.environ.get("FAULTS_PGDATA", "/tmp/gatehouse-pg-faults")
        if self.port == 55432:
            raise SystemExit("faults: refusing to use the shared PostgreSQL on 55432")
        candidates = sorted(
            (d for d in (os.path.join("/usr/lib/postgresql", v, "bin") for v in self._versions()) if os.path.isdir(d)),
            key=lambda d: [int(x) if x.isdigit() else x for x in d.split("/")[-2].split(".")])
        self.bin = candidates[-1] if candidates else None
        self.enabled = self.bin is not None and self.ready()

    @staticmethod
    def _versions():
        try:
            return os.listdir("/usr/lib/postgresql")
        except OSError:
            return []

    def run_pg(self, command: str, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess:
        """As scripts/start-postgres.sh does: as user postgres when root."""
        argv = ["su", "postgres", "-c", command] if os.geteuid() == 0 else ["bash", "-c", command]
        return subprocess.run(argv, cwd="/tmp", capture_output=True, text=True, check=check, timeout=timeout)

    def ready(self) -> bool:
        if not self.bin:
            return False
        return subprocess.run([f"{self.bin}/pg_isready", "-h", "127.0.0.1", "-p", str(self.port)],
                              capture_output=True).returncode == 0

    def url(self, database: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def psql(self, database: str, sql: str) -> list[list[str]]:
        out = subprocess.run([f"{self.bin}/psql", "-X", "-q", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres",
                              "-d", database, "-At", "-F", "\x1f", "-v", "ON_ERROR_STOP=1", "-c", sql],
                             capture_output=True, text=True, timeout=60)
        if out.returncode != 0:
            raise RuntimeError(f"psql failed: {out.stderr.strip()}")
        return [line.split("\x1f") for line in out.stdout.splitlines() if line != ""]

    def create_database(self, name: str) -> str:
        self.psql("postgres", f'DROP DATABASE IF EXISTS "{name}"')
        self.psql("postgres", f'CREATE DATABASE "{name}"')
        return self.url(name)

    def drop_database(self, name: str) -> None:
        try:
            self.psql("postgres", f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        except Exception as error:  # best effort: the instance is thrown away at the end anyway
            log(f"  (could not drop {name}: {error})")

    def stop(self, mode: str = "fast") -> None:
        self.run_pg(f"{self.bin}/pg_ctl -D {shlex.quote(self.data)} -w -m {mode} stop")

    def start(self) -> None:
        # The same options scripts/start-postgres.sh starts it with.
        options = f"-p {self.port} -k /tmp -c max_connections=400 -c fsync=off -c listen_addresses=127.0.0.1"
        self.run_pg(f"{self.bin}/pg_ctl -D {shlex.quote(self.data)} -l {shlex.quote(self.data)}/server.log -w "
                    f"-o {shlex.quote(options)} start")


# ---------------------------------------------------------------------------------------------
# Reading a gatehouse database directly


class Inspector:
    """Runs read-only SQL against the database a test's servers use (sqlite3 or psql)."""

    def __init__(self, engine: str, *, sqlite_path: str = "", pg: Optional[FaultsPostgres] = None, pg_database: str = ""):
        self.engine = engine
        self.sqlite_path = sqlite_path
        self.pg = pg
        self.pg_database = pg_database

    def rows(self, sql: str) -> list[list[str]]:
        if self.engine == "sqlite":
            connection = sqlite3.connect(self.sqlite_path, timeout=10)
            try:
                return [["" if v is None else str(v) for v in row] for row in connection.execute(sql).fetchall()]
            finally:
                connection.close()
        return self.pg.psql(self.pg_database, sql)

    def scalar(self, sql: str) -> str:
        rows = self.rows(sql)
        return rows[0][0] if rows else ""


def strict() -> bool:
    return os.environ.get("FAULTS_STRICT") == "1"


def seed_from_env() -> int:
    raw = os.environ.get("FAULTS_SEED")
    if raw:
        return int(raw)
    return int(time.time() * 1000) % 1_000_000_007


def workdir(prefix: str) -> str:
    base = os.environ.get("FAULTS_WORKDIR") or tempfile.gettempdir()
    os.makedirs(base, exist_ok=True)
    return tempfile.mkdtemp(prefix=f"{prefix}-", dir=base)
