"""The fleet of docs/deploy.md, "Past one machine", started whole on this machine for the fleet test:

    clients ─▶ HAProxy :19283 (HTTP, checks GET /health, a token keeps to one instance)
                  ├─▶ gatehouse :19280 ┐
                  ├─▶ gatehouse :19281 ├─ DATABASE_URL ─▶ PgBouncer :19285 (transaction mode) ─┐
                  └─▶ gatehouse :19282 ┘   GATEHOUSE_DATABASE_DIRECT_URL ─────────────────────────┤
                                            GATEHOUSE_EVENT_BUS ─▶ Redis :19286                   ▼
                                            GATEHOUSE_DATABASE_REPLICA_URLS ─▶ node B    HAProxy :19284 (the primary's
                                                                                          address, TCP) ─▶ node A
    PostgreSQL node A :19287 (primary)  ──streaming, synchronous──▶  node B :19288 (hot standby)

Every part is a real process of Debian's packages (postgresql, pgbouncer, redis-server, haproxy); the PostgreSQL
nodes are clusters of the fleet's own, in its work folder. The primary waits for the standby to flush each commit
(`synchronous_standby_names`), so a promoted standby holds every commit a client was told about: that is what makes
the failover lose nothing (and what makes writes wait while the standby is away, `replica_stop` measures how long).
A failover by hand is what an operator does: stop the old primary, `pg_ctl promote` the standby, point the
primary's address at it (HAProxy's runtime API, as a DNS name or a virtual IP would be moved).

Standard library only, like the rest of the harness.
"""
from __future__ import annotations

import asyncio
import os
import pwd
import shlex
import shutil
import signal
import socket
import subprocess
import time
from typing import Optional

from common import Gatehouse, NoAnswer, NotSent, http

INSTANCE_PORTS = (19280, 19281, 19282)
BALANCER = 19283
PRIMARY_ADDRESS = 19284
PGBOUNCER = 19285
REDIS = 19286
NODE_A = 19287
NODE_B = 19288
DATABASE = "gatehouse"


def _as_postgres() -> list[str]:
    return ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--"] if os.geteuid() == 0 else []


def _answers(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _wait_port(port: int, seconds: float, up: bool = True) -> None:
    deadline = time.monotonic() + seconds
    while _answers(port) != up:
        if time.monotonic() > deadline:
            raise RuntimeError(f"port {port} {'never answered' if up else 'still answers'} after {seconds:.0f}s")
        time.sleep(0.05)


def _program(name: str, folders: tuple = ("/usr/sbin", "/usr/bin")) -> str:
    for folder in folders:
        if os.access(os.path.join(folder, name), os.X_OK):
            return os.path.join(folder, name)
    raise RuntimeError(f"{name} is not installed (Faults/run.sh --only fleet needs haproxy, pgbouncer, redis-server, postgresql)")


class Node:
    """One PostgreSQL cluster of the fleet, driven by pg_ctl."""

    def __init__(self, name: str, folder: str, port: int, bin_dir: str):
        self.name, self.data, self.port, self.bin = name, os.path.join(folder, name), port, bin_dir
        self.log = os.path.join(folder, f"{name}.log")

    def ctl(self, *arguments: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run(_as_postgres() + [f"{self.bin}/pg_ctl", "-D", self.data, *arguments],
                              capture_output=True, text=True, check=check, timeout=120, cwd="/tmp")

    def start(self, *settings: str) -> None:
        options = ["-p", str(self.port), "-k", "", "-c", "listen_addresses=127.0.0.1", "-c", "max_connections=300",
                   "-c", "fsync=off", "-c", "hot_standby=on", "-c", "wal_keep_size=256MB"]
        for setting in settings:
            options += ["-c", setting]
        self.ctl("-l", self.log, "-w", "-t", "60", "-o", " ".join(shlex.quote(o) for o in options), "start")

    def stop(self, mode: str) -> None:
        self.ctl("-w", "-m", mode, "stop", check=False)

    def running(self) -> bool:
        return self.ctl("status", check=False).returncode == 0

    def psql(self, sql: str, database: str = DATABASE) -> list[list[str]]:
        out = subprocess.run([f"{self.bin}/psql", "-X", "-q", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-d", database,
                              "-At", "-F", "\x1f", "-v", "ON_ERROR_STOP=1", "-c", sql], capture_output=True, text=True, timeout=60)
        if out.returncode != 0:
            raise RuntimeError(f"psql on {self.name}: {out.stderr.strip()}")
        return [line.split("\x1f") for line in out.stdout.splitlines() if line != ""]


class Fleet:
    def __init__(self, work: str, instance_env: Optional[dict] = None):
        self.work = work
        os.chmod(work, 0o755)
        self.pg_folder = os.path.join(work, "pg")
        os.makedirs(self.pg_folder, exist_ok=True)
        os.chmod(self.pg_folder, 0o700)
        if os.geteuid() == 0:
            user = pwd.getpwnam("postgres")
            os.chown(self.pg_folder, user.pw_uid, user.pw_gid)
        versions = sorted(os.listdir("/usr/lib/postgresql"), key=lambda v: [int(x) for x in v.split(".") if x.isdigit()])
        self.pg_bin = f"/usr/lib/postgresql/{versions[-1]}/bin"
        self.primary = Node("node-a", self.pg_folder, NODE_A, self.pg_bin)
        self.standby: Optional[Node] = Node("node-b", self.pg_folder, NODE_B, self.pg_bin)
        self.processes: dict[str, subprocess.Popen] = {}
        direct = f"postgres://postgres@127.0.0.1:{PRIMARY_ADDRESS}/{DATABASE}"
        self.env = {
            "DATABASE_URL": f"postgres://postgres@127.0.0.1:{PGBOUNCER}/{DATABASE}",
            "GATEHOUSE_DATABASE_DIRECT_URL": direct,
            "GATEHOUSE_DATABASE_REPLICA_URLS": f"postgres://postgres@127.0.0.1:{NODE_B}/{DATABASE}",
            "GATEHOUSE_EVENT_BUS": f"redis://127.0.0.1:{REDIS}",
            **(instance_env or {}),
        }
        self.instances = [Gatehouse(f"instance-{i + 1}", port, self.env["DATABASE_URL"], work, extra_env=self.env)
                          for i, port in enumerate(INSTANCE_PORTS)]

    # -- starting

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, self._start_databases)
        self._start_haproxy()
        self._start_pgbouncer()
        self._start_redis()
        for instance in self.instances:   # one after another: the first runs the migrations
            await instance.start(ready_timeout=60)
        await self.wait_balanced()

    def _start_databases(self) -> None:
        run = subprocess.run(_as_postgres() + [f"{self.pg_bin}/initdb", "-D", self.primary.data, "-A", "trust", "-U", "postgres"],
                             capture_output=True, text=True, cwd="/tmp")
        if run.returncode != 0:
            raise RuntimeError(f"initdb: {run.stderr.strip()}")
        self.primary.start()
        self.primary.psql(f"CREATE DATABASE {DATABASE}", database="postgres")
        run = subprocess.run(_as_postgres() + [f"{self.pg_bin}/pg_basebackup", "-h", "127.0.0.1", "-p", str(NODE_A), "-U", "postgres",
                                               "-D", self.standby.data, "-R", "-X", "stream", "--checkpoint=fast"],
                             capture_output=True, text=True, cwd="/tmp")
        if run.returncode != 0:
            raise RuntimeError(f"pg_basebackup: {run.stderr.strip()}")
        self.start_standby()
        # Synchronous from now on: a commit is answered once the standby has it on disk. (In the primary's own
        # settings, after the base backup: the standby, once promoted, waits for no one.)
        self.primary.psql("ALTER SYSTEM SET synchronous_standby_names = 'standby'", database="postgres")
        self.primary.psql("SELECT pg_reload_conf()", database="postgres")
        deadline = time.monotonic() + 30
        while self.primary.psql("SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'", database="postgres") != [["1"]]:
            if time.monotonic() > deadline:
                raise RuntimeError("the standby did not become synchronous")
            time.sleep(0.1)

    def start_standby(self) -> None:
        assert self.standby is not None
        self.standby.start("cluster_name=standby")   # the walreceiver's application_name: the synchronous standby's

    def _spawn(self, name: str, argv: list[str], port: int) -> None:
        logfile = open(os.path.join(self.work, f"{name}.log"), "a")
        self.processes[name] = subprocess.Popen(argv, stdout=logfile, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=self.work)
        logfile.close()
        _wait_port(port, 30)

    def _start_haproxy(self) -> None:
        servers = "\n".join(f"  server g{i + 1} 127.0.0.1:{port} check" for i, port in enumerate(INSTANCE_PORTS))
        config = os.path.join(self.work, "haproxy.cfg")
        with open(config, "w") as f:
            f.write(f"""global
  stats socket {self.work}/haproxy.sock mode 600 level admin
  maxconn 8000

defaults
  timeout connect 2s
  timeout client 60s
  timeout server 60s
  timeout tunnel 1h

frontend web
  mode http
  bind 127.0.0.1:{BALANCER}
  default_backend gatehouse

backend gatehouse
  mode http
  # A token keeps to one instance (its read-your-writes pin is per instance); no token: round robin.
  balance hdr(Authorization)
  hash-type consistent
  option httpchk GET /health
  http-check expect status 200
  # A connection refused (an instance stopping or gone) is tried on another: the request never reached it.
  option redispatch
  retries 3
  default-server inter 250ms fall 2 rise 2
  http-response set-header X-Served-By %[srv_name]
{servers}

listen primary
  mode tcp
  bind 127.0.0.1:{PRIMARY_ADDRESS}
  timeout client 1h
  timeout server 1h
  server primary 127.0.0.1:{NODE_A}
""")
        self._spawn("haproxy", [_program("haproxy"), "-f", config, "-db"], BALANCER)

    def _start_pgbouncer(self) -> None:
        folder = os.path.join(self.work, "pgbouncer")
        os.makedirs(folder, exist_ok=True)
        os.chmod(folder, 0o777)
        with open(os.path.join(folder, "users.txt"), "w") as f:
            f.write('"postgres" ""\n')
        with open(os.path.join(folder, "pgbouncer.ini"), "w") as f:
            f.write(f"""[databases]
* = host=127.0.0.1 port={PRIMARY_ADDRESS}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {PGBOUNCER}
unix_socket_dir =
auth_type = trust
auth_file = {folder}/users.txt
pool_mode = transaction
default_pool_size = 40
max_client_conn = 2000
server_connect_timeout = 3
server_login_retry = 1
logfile = {folder}/pgbouncer.log
""")
        for name in ("users.txt", "pgbouncer.ini"):
            os.chmod(os.path.join(folder, name), 0o644)
        self.start_pgbouncer()

    def start_pgbouncer(self) -> None:
        ini = os.path.join(self.work, "pgbouncer", "pgbouncer.ini")
        self._spawn("pgbouncer", [_program("pgbouncer")] + (["-u", "postgres"] if os.geteuid() == 0 else []) + [ini], PGBOUNCER)

    def _start_redis(self) -> None:
        self._spawn("redis", [_program("redis-server"), "--port", str(REDIS), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                              "--dir", self.work], REDIS)

    async def wait_balanced(self, seconds: float = 30) -> None:
        """Until the balancer sends to every instance (each is up in its checks)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if all(state == "UP" for state in self.balancer_states().values()):
                return
            await asyncio.sleep(0.1)
        raise RuntimeError(f"the balancer does not see every instance up: {self.balancer_states()}")

    # -- the balancer's runtime API

    def haproxy(self, command: str) -> str:
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(5)
            s.connect(os.path.join(self.work, "haproxy.sock"))
            s.sendall(command.encode() + b"\n")
            chunks = []
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                chunks.append(chunk)
        return b"".join(chunks).decode()

    def balancer_states(self) -> dict[str, str]:
        """Each instance's state in the balancer's checks (UP, DOWN, …)."""
        lines = self.haproxy("show stat").splitlines()
        if not lines:
            return {}
        header = lines[0].lstrip("# ").split(",")
        states = {}
        for line in lines[1:]:
            row = dict(zip(header, line.split(",")))
            if row.get("pxname") == "gatehouse" and row.get("svname", "").startswith("g"):
                states[row["svname"]] = row.get("status", "")
        return states

    # -- the faults

    def stop_process(self, name: str, how: int = signal.SIGTERM) -> None:
        process = self.processes.get(name)
        if process and process.poll() is None:
            process.send_signal(how)
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def restart_redis(self, down: float) -> None:
        self.stop_process("redis", signal.SIGKILL)
        time.sleep(down)
        self._start_redis()

    def restart_pgbouncer(self, down: float) -> None:
        self.stop_process("pgbouncer", signal.SIGKILL)
        time.sleep(down)
        self.start_pgbouncer()

    def failover(self) -> float:
        """The primary lost (immediate shutdown, as a crash), the standby promoted and the primary's address moved to
        it. Returns the seconds from the loss to the new primary taking writes."""
        assert self.standby is not None
        lost = time.monotonic()
        self.primary.stop("immediate")
        self.standby.ctl("-w", "-t", "60", "promote")
        self.haproxy(f"set server primary/primary addr 127.0.0.1 port {self.standby.port}")
        self.haproxy("shutdown sessions server primary/primary")
        self.primary, self.standby = self.standby, None
        return time.monotonic() - lost

    # -- the end

    def stop(self) -> None:
        for instance in self.instances:
            instance.stop()
        for name in ("haproxy", "pgbouncer", "redis"):
            self.stop_process(name)
        for node in (self.primary, self.standby):
            if node is not None:
                node.stop("fast")
        # The old primary after a failover.
        for name in ("node-a", "node-b"):
            node = Node(name, self.pg_folder, 0, self.pg_bin)
            if os.path.isdir(node.data) and node.running():
                node.stop("immediate")

    def remove(self) -> None:
        shutil.rmtree(self.pg_folder, ignore_errors=True)


async def probe(port: int, token: str, stop: list, samples: list) -> None:
    """A write every 50 ms through the balancer (the same device registered again), each (start, end, ok) kept: what a
    disruption cost is read from it."""
    while not stop[0]:
        start = time.monotonic()
        try:
            answer = await http("POST", port, "/v1/me/devices", json_body={"platform": "fcm", "token": "probe"}, token=token, timeout=20)
            ok = answer.status in (200, 201)
        except (NotSent, NoAnswer):
            ok = False
        samples.append((start, time.monotonic(), ok))
        await asyncio.sleep(0.05)


def disruption(samples: list, since: float, until: float) -> tuple[float, int]:
    """What a fault in [since, until) cost the probe: the longest time without a write answered (from one answered
    write to the next, less the probe's own pause), and how many writes failed."""
    done = sorted(e for s, e, ok in samples if ok and since <= e < until)
    failed = sum(1 for s, e, ok in samples if not ok and since <= s < until)
    marks = [since] + done + [until]
    longest = max((b - a for a, b in zip(marks, marks[1:])), default=0.0)
    return max(0.0, longest - 0.05), failed
