"""A `gatehouse serve` process for the Python-driven tests (the browser scripts here, the demo's terminal scenarios):
a free port, the process started and known to answer on it, and its state for a failure's message."""
import os
import socket
import subprocess
import time
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listens(pid, port):
    """Whether process `pid` holds the socket listening on 127.0.0.1:`port` (read from /proc: another test's server
    that happens to hold the same port answers /health too, and must not pass for this one)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = open(table).read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if int(fields[1].split(":")[1], 16) == port and fields[3] == "0A":
                inodes.add(fields[9])
    try:
        links = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
    except OSError:
        return False
    return any(link == f"socket:[{inode}]" for link in links for inode in inodes)


def start_server(gatehouse, work, env, log):
    """`gatehouse serve` in `work`, its output appended to `log`; returned once /health answers from this very process
    (30 s at most). A process that exits first, or a port another process holds, is an error with the log's tail."""
    process = subprocess.Popen([gatehouse, "serve"], cwd=work, env=env, stdout=open(log, "a"), stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL)
    process.log = log
    port = int(env["GATEHOUSE_PORT"])
    for _ in range(300):
        if process.poll() is not None:
            raise RuntimeError(f"gatehouse serve exited with {process.returncode} before answering:\n" + open(log).read()[-3000:])
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
                if listens(process.pid, port):
                    return process
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"gatehouse serve did not answer on {port} within 30 s:\n" + open(log).read()[-3000:])


def server_state(process):
    """For a failure's message: whether the server still runs, and its log's tail."""
    if process is None:
        return ""
    state = "running" if process.poll() is None else f"exited with {process.returncode}"
    tail = open(process.log).read()[-2000:] if getattr(process, "log", None) and os.path.exists(process.log) else ""
    return f"the server ({state}), its log's tail:\n{tail}\n"
