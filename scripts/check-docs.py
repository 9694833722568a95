#!/usr/bin/env python3
"""Runs the terminal sessions of docs/*.md against a live server, as a reader would paste them.

A session is the lines of a fenced block that start with `$ ` (a command; a line ending in `\\`
continues it), each followed by the output the page shows. Every page runs in one shell, from its
first command to its last, against a fresh server on a fresh database, so a later command can use
what an earlier one set (`TOKEN=$(...)`). For each command the check asks:

- the shell's exit status is 0;
- every HTTP answer it got has the status the page shows: the `HTTP/1.1 NNN` line when the output
  shows one, else the `"status":NNN` of a problem document, else a success (2xx).

The page's `http://127.0.0.1:8080` is this server's address, and `swift run --package-path Server gatehouse` its binary. Blocks without `$ ` prompts (code,
JSON, the `sh` blocks that start long harnesses CI runs by itself) are not sessions.

    python3 scripts/check-docs.py [--bin Server/.build/debug/gatehouse] [docs/api-v1.md ...]
"""
import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sessions(path):
    """[(command, shown output)] of every `$ ` line on the page, in order."""
    commands = []
    in_block = False
    current = None
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line.strip().startswith("```"):
            in_block = not in_block
            current = None
            continue
        if not in_block:
            continue
        if current is not None and current["continues"]:
            current["command"] += "\n" + line
            if current["heredoc"]:
                current["continues"] = line.strip() != current["heredoc"]
                if not current["continues"]:
                    current["heredoc"] = None
            else:
                current["continues"] = line.endswith("\\")
            continue
        if line.lstrip().startswith("$ "):
            command = line.lstrip()[2:]
            heredoc = re.search(r"<<-?\s*'?\"?(\w+)'?\"?", command)
            current = {"command": command, "output": [], "heredoc": heredoc.group(1) if heredoc else None,
                       "continues": bool(heredoc) or line.endswith("\\")}
            commands.append(current)
        elif current is not None:
            current["output"].append(line)
    return [(c["command"], "\n".join(c["output"])) for c in commands]


def expected_status(output):
    m = re.search(r"^HTTP/1\.1 (\d{3})", output, re.M)
    if m:
        return int(m.group(1))
    m = re.search(r'"status":\s*(\d{3})', output)
    if m:
        return int(m.group(1))
    return None   # a success


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_page(path, binary):
    steps = sessions(path)
    if not steps:
        return 0, 0
    work = tempfile.mkdtemp(prefix="gatehouse-docs-")
    port = free_port()
    # The default database name in the working directory, so `gatehouse outbox` there finds it.
    env = dict(os.environ, DATABASE_URL=os.path.join(work, "gatehouse.sqlite"), GATEHOUSE_PORT=str(port),
               GATEHOUSE_LOG_LEVEL="warning", GATEHOUSE_DELIVERY_WAIT_SECONDS="0")
    server = subprocess.Popen([binary, "serve"], cwd=work, env=env, stdout=open(os.path.join(work, "server.log"), "w"),
                              stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(600):  # up to a minute: in CI it starts at a lower priority beside the fault tests
            try:
                urllib.request.urlopen(base + "/health", timeout=1)
                break
            except Exception:
                time.sleep(0.1)
        status_log = os.path.join(work, "status.log")
        script = [
            "set -o pipefail",
            f"cd {work}",
            f"export STATUS_LOG={status_log}",
            # Every curl reports the status it got, on the side.
            'curl() { command curl -w "%{stderr}\\n@@status=%{http_code}\\n" "$@" 2>>"$STATUS_LOG"; }',
        ]
        for index, (command, _) in enumerate(steps):
            command = command.replace("127.0.0.1:8080", f"127.0.0.1:{port}").replace("localhost:8080", f"127.0.0.1:{port}")
            command = command.replace("swift run --package-path Server gatehouse ", binary + " ")
            script.append(f'echo "@@step={index}" >> "$STATUS_LOG"')
            script.append(command)
            script.append(f'echo "@@rc={index}:$?" >> "$STATUS_LOG"')
        result = subprocess.run(["bash", "-c", "\n".join(script)], capture_output=True, text=True, timeout=300,
                                env=dict(os.environ, GATEHOUSE=base))
        statuses = {}
        codes = {}
        step = None
        for line in open(status_log, encoding="utf-8", errors="replace"):
            if line.startswith("@@step="):
                step = int(line[7:])
                statuses[step] = []
            elif line.startswith("@@status=") and step is not None:
                statuses[step].append(int(line[9:]))
            elif line.startswith("@@rc="):
                i, rc = line[5:].split(":")
                codes[int(i)] = int(rc)
        failures = 0
        for index, (command, output) in enumerate(steps):
            want = expected_status(output)
            got = statuses.get(index, [])
            problems = []
            if codes.get(index) != 0:
                problems.append(f"exit status {codes.get(index)}")
            if want is not None and want not in got:
                problems.append(f"the page shows {want}, the server answered {got}")
            if want is None and any(s >= 400 or s == 0 for s in got):
                problems.append(f"the page shows a success, the server answered {got}")
            if problems:
                failures += 1
                print(f"FAIL {os.path.relpath(path, ROOT)}: $ {command.splitlines()[0][:110]}\n     " + "; ".join(problems))
        if failures:
            print(result.stdout[-3000:])
            print(result.stderr[-3000:], file=sys.stderr)
        return len(steps), failures
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
        shutil.rmtree(work, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=os.path.join(ROOT, "Server", ".build", "debug", "gatehouse"))
    parser.add_argument("pages", nargs="*")
    args = parser.parse_args()
    pages = args.pages or sorted(os.path.join(ROOT, "docs", p) for p in os.listdir(os.path.join(ROOT, "docs")) if p.endswith(".md"))
    total = failed = 0
    for page in pages:
        steps, failures = run_page(page, args.bin)
        if steps:
            print(f"{os.path.relpath(page, ROOT)}: {steps} commands, {failures} failed")
        total += steps
        failed += failures
    print(f"check-docs: {total} commands, {failed} failed")
    sys.exit(1 if failed or not total else 0)


if __name__ == "__main__":
    main()
