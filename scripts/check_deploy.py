#!/usr/bin/env python3
"""docs/deploy.md tried for real: nginx (Debian's) with the page's own configuration, a self-signed
certificate, in front of two `gatehouse serve` instances on one PostgreSQL database. Checks:
- HTTP/2 with TLS on the way in (curl --http2);
- the client's address: a client on 127.0.0.2 that claims X-Forwarded-For 203.0.113.9 is recorded
  as 127.0.0.2 (nginx appends what it saw; Gatehouse takes the right-most entry);
- a realtime socket opened through the proxy (wss://…/v1/realtime) receives every message sent
  through the proxy, served by both instances in turn (nginx tells which one answered each).

    python3 scripts/check_deploy.py --gatehouse PATH --postgres-url URL [--nginx /usr/sbin/nginx]
Needs nginx, openssl and curl; websocket-client from PyPI (scripts/test.sh's virtual environment).
"""
import argparse
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
import http.client

import websocket  # websocket-client

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def nginx_config(work, upstreams, port, cert, key):
    """The nginx block of docs/deploy.md, with this run's ports, files and a header naming the instance that answered."""
    page = open(os.path.join(ROOT, "docs", "deploy.md"), encoding="utf-8").read()
    block = re.search(r"```nginx\n(.*?)```", page, re.S).group(1)
    block = block.replace("server 127.0.0.1:8081;", f"server 127.0.0.1:{upstreams[0]};")
    block = block.replace("server 127.0.0.1:8082;", f"server 127.0.0.1:{upstreams[1]};")
    assert block.count(f"server 127.0.0.1:{upstreams[0]};") == 2, "docs/deploy.md's upstreams changed shape"
    block = block.replace("listen 443 ssl http2;", f"listen 127.0.0.1:{port} ssl http2;")
    block = block.replace("/etc/ssl/certs/id.example.com.pem", cert).replace("/etc/ssl/private/id.example.com.key", key)
    assert cert in block and f"127.0.0.1:{port} ssl" in block, "docs/deploy.md's nginx block changed shape"
    # Test-only: which instance answered (the page's configuration does not need it).
    block = block.replace("    location / {", "    add_header X-Gatehouse-Upstream $upstream_addr always;\n\n    location / {", 1)
    return f"""daemon off;
pid {work}/nginx.pid;
error_log {work}/nginx-error.log warn;
worker_processes 1;
events {{ worker_connections 256; }}
http {{
    access_log {work}/nginx-access.log;
    client_body_temp_path {work}/body;
    proxy_temp_path {work}/proxy;
    fastcgi_temp_path {work}/fastcgi;
    uwsgi_temp_path {work}/uwsgi;
    scgi_temp_path {work}/scgi;
{block}
}}
"""


def wait_for(url, context=None, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url, context=context, timeout=2) as r:
                if r.status == 200:
                    return
        except Exception:  # noqa: BLE001 - not up yet
            time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer")


class Client:
    """JSON over https through the proxy, from a chosen source address."""

    def __init__(self, port, cafile, source="127.0.0.1"):
        self.port, self.source = port, source
        self.context = ssl.create_default_context(cafile=cafile)

    def call(self, method, path, body=None, token=None, headers=None):
        conn = http.client.HTTPSConnection("localhost", self.port, context=self.context, source_address=(self.source, 0), timeout=15)
        all_headers = {"Content-Type": "application/json"}
        if token:
            all_headers["Authorization"] = "Bearer " + token
        all_headers.update(headers or {})
        conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=all_headers)
        response = conn.getresponse()
        data = response.read()
        conn.close()
        return response.status, (json.loads(data) if data else None), response.getheader("X-Gatehouse-Upstream")


def signup(client, email, tag):
    status, _, _ = client.call("POST", "/v1/signup/code", {"email": email})
    assert status == 202, status
    status, outbox, _ = client.call("GET", "/dev/outbox?to=" + urllib.parse.quote(email) + "&last=1")
    assert status == 200, status
    status, session, _ = client.call("POST", "/v1/signup", {"email": email, "code": outbox[0]["code"], "password": "Secret-42!",
                                                            "firstName": tag.capitalize(), "lastName": "Lee", "tag": tag})
    assert status == 201, (status, session)
    return session["token"], session["account"]["id"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gatehouse", required=True)
    parser.add_argument("--postgres-url", required=True)
    parser.add_argument("--nginx", default=shutil.which("nginx") or "/usr/sbin/nginx")
    args = parser.parse_args()

    work = tempfile.mkdtemp(prefix="gatehouse-deploy-")
    processes = []
    try:
        # A database of its own.
        base = urllib.parse.urlparse(args.postgres_url)
        database = "gatehouse_deploy_" + str(os.getpid())
        admin = subprocess.run(["psql", args.postgres_url, "-v", "ON_ERROR_STOP=1", "-c", f"CREATE DATABASE {database}"], capture_output=True, text=True)
        assert admin.returncode == 0, admin.stderr
        url = base._replace(path="/" + database).geturl()

        cert, key = os.path.join(work, "cert.pem"), os.path.join(work, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=localhost",
                        "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", key, "-out", cert],
                       check=True, capture_output=True)
        port, upstreams = free_port(), [free_port(), free_port()]
        env = dict(os.environ, DATABASE_URL=url, GATEHOUSE_TRUST_FORWARDED_FOR="true", GATEHOUSE_BCRYPT_COST="4",
                   GATEHOUSE_LOG_LEVEL="warning", PUBLIC_URL=f"https://localhost:{port}", GATEHOUSE_BLOB_DIR=os.path.join(work, "blobs"),
                   GATEHOUSE_AUTO_MIGRATE="false")
        # As the page says: migrate once, then start the instances without migrating.
        subprocess.run([args.gatehouse, "migrate"], env=env, cwd=work, check=True, capture_output=True, timeout=120)
        for index, upstream in enumerate(upstreams):
            log = open(os.path.join(work, f"instance-{index}.log"), "w")
            processes.append(subprocess.Popen([args.gatehouse, "serve", "--port", str(upstream)], env=env, cwd=work, stdout=log, stderr=log))
        for upstream in upstreams:
            wait_for(f"http://127.0.0.1:{upstream}/health")
        for folder in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
            os.makedirs(os.path.join(work, folder))
        with open(os.path.join(work, "nginx.conf"), "w") as f:
            f.write(nginx_config(work, upstreams, port, cert, key))
        test = subprocess.run([args.nginx, "-t", "-c", os.path.join(work, "nginx.conf"), "-p", work], capture_output=True, text=True)
        assert test.returncode == 0, test.stderr
        processes.append(subprocess.Popen([args.nginx, "-c", os.path.join(work, "nginx.conf"), "-p", work],
                                          stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "nginx.log"), "w")))
        context = ssl.create_default_context(cafile=cert)
        wait_for(f"https://localhost:{port}/health", context=context)

        # HTTP/2 with TLS to clients.
        head = subprocess.run(["curl", "-sS", "-o", "/dev/null", "-w", "%{http_version} %{http_code}", "--http2", "--cacert", cert,
                               f"https://localhost:{port}/health"], capture_output=True, text=True)
        assert head.stdout == "2 200", head.stdout + head.stderr
        print("nginx: HTTP/2 over TLS in front of two instances")

        # The client's address: nginx's view of it, never what the client claims.
        ann_client = Client(port, cert, source="127.0.0.2")
        ann, ann_id = signup(ann_client, "ann@example.com", "ann")
        status, sessions, _ = ann_client.call("GET", "/v1/sessions", token=ann, headers={"X-Forwarded-For": "203.0.113.9"})
        assert status == 200 and {s["ip"] for s in sessions["sessions"]} == {"127.0.0.2"}, sessions
        print("client address: 127.0.0.2 as nginx saw it (a claimed X-Forwarded-For is not believed)")

        # A realtime socket through the proxy, messages through the proxy: whichever instance holds
        # the socket, every message arrives, and the messages were served by both instances.
        bob_client = Client(port, cert)
        bob, bob_id = signup(bob_client, "bob@example.com", "bob")
        status, chat, _ = bob_client.call("POST", "/v1/chats", {"personId": ann_id}, token=bob)
        assert status == 200, (status, chat)
        socket_ = websocket.create_connection(f"wss://localhost:{port}/v1/realtime", sslopt={"ca_certs": cert}, timeout=15,
                                              source_address=("127.0.0.2", 0))
        socket_.send(json.dumps({"type": "auth", "token": ann}))
        ready = json.loads(socket_.recv())
        assert ready.get("type") == "ready", ready
        served = set()
        texts = [f"message {n}" for n in range(6)]
        for n, text in enumerate(texts):
            status, message, upstream = bob_client.call("POST", f"/v1/chats/{chat['id']}/messages",
                                                        {"text": text, "clientMessageId": f"bob-{n}"}, token=bob)
            assert status == 201, (status, message)
            served.add(upstream)
        assert len(served) == 2, f"the messages went to one instance only: {served}"
        received = []
        deadline = time.time() + 15
        while len(received) < len(texts) and time.time() < deadline:
            frame = json.loads(socket_.recv())
            if frame.get("type") == "message.created":
                received.append(frame["data"]["text"])
        socket_.close()
        assert received == texts, received
        print(f"realtime: {len(texts)} messages sent through both instances ({', '.join(sorted(served))}) reached one socket, in order")
        print("deploy check passed")
    except Exception:
        for name in sorted(os.listdir(work)):
            if name.endswith(".log"):
                sys.stderr.write(f"--- {name} ---\n" + open(os.path.join(work, name), errors="replace").read()[-3000:] + "\n")
        raise
    finally:
        for process in reversed(processes):
            process.send_signal(signal.SIGTERM)
        for process in processes:
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
        subprocess.run(["psql", args.postgres_url, "-c", f"DROP DATABASE IF EXISTS gatehouse_deploy_{os.getpid()}"], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
