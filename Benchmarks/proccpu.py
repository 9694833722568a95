"""Processor time per operation, read from /proc: the figure that compares across runs on a machine
whose cores the load generator shares (throughput and latency move with what else runs; the
processor time a server spends on an operation does not, much).

    meter = Meter(server_pid)          # the server's process, and every PostgreSQL process
    before = meter.sample()
    ... run N operations ...
    cost = meter.since(before, N)      # {"server_ms": …, "postgres_ms": …} per operation

PostgreSQL's share is the sum over its processes (the postmaster's children: backends, WAL writer,
checkpointer…) plus what the postmaster has reaped from children that ended during the run, so a
connection closed mid-run still counts.
"""
import os

TICKS = os.sysconf("SC_CLK_TCK")


def _stat(pid):
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def process_seconds(pid, children=False):
    """utime + stime of one process (and, with children, of its reaped children), in seconds."""
    try:
        fields = _stat(pid)
    except (FileNotFoundError, ProcessLookupError):
        return 0.0
    ticks = int(fields[11]) + int(fields[12])
    if children:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / TICKS


def postgres_pids():
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/comm") as f:
                    if f.read().strip() == "postgres":
                        pids.append(int(entry))
            except OSError:
                pass
    return pids


def postgres_seconds():
    """Every PostgreSQL process's time, and the postmasters' reaped children's."""
    pids = set(postgres_pids())
    total = 0.0
    for pid in pids:
        try:
            parent = int(_stat(pid)[1])
        except (FileNotFoundError, ProcessLookupError):
            continue
        # A postmaster (its parent is not PostgreSQL) also carries its ended children.
        total += process_seconds(pid, children=parent not in pids)
    return total


class Meter:
    def __init__(self, *server_pids, postgres=True):
        self.server_pids = [p for p in server_pids if p]
        self.postgres = postgres

    def sample(self):
        return (sum(process_seconds(p) for p in self.server_pids), postgres_seconds() if self.postgres else 0.0)

    def since(self, before, operations):
        server, db = self.sample()
        n = max(operations, 1)
        result = {"server_ms": round(1000 * (server - before[0]) / n, 4)} if self.server_pids else {}
        if self.postgres:
            result["postgres_ms"] = round(1000 * (db - before[1]) / n, 4)
        return result
