#!/usr/bin/env python3
"""A local Pwned Passwords range API, as Have I Been Pwned documents it
(https://haveibeenpwned.com/API/v3#SearchingPwnedPasswordsByRange):

    GET /range/{first 5 hex characters of the SHA-1}  ->  200, text/plain, one `SUFFIX:COUNT` per line (CRLF),
                                                           the 35-character suffixes in upper case;
    with `Add-Padding: true` the answer also holds random suffixes with a count of 0.
    Anything but five hex characters is 400.

The breached passwords are given on the command line (`--breached PASSWORD:COUNT`, repeated). `GET /_test/requests`
answers every request received (path and headers), so a test can see what left the server under test.

    python3 pwned_range_peer.py --port 18080 --breached 'correct-Horse-7!:42'
"""
import argparse
import hashlib
import json
import re
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, required=True)
parser.add_argument("--breached", action="append", default=[])
parser.add_argument("--delay", type=float, default=0, help="seconds to wait before answering a range")
args = parser.parse_args()

BREACHED = {}
for item in args.breached:
    password, count = item.rsplit(":", 1)
    BREACHED[hashlib.sha1(password.encode("utf-8")).hexdigest().upper()] = int(count)
REQUESTS = []
LOCK = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *_):
        pass

    def answer(self, status, body, content_type="text/plain"):
        data = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/_test/requests":
            with LOCK:
                return self.answer(200, json.dumps(REQUESTS), "application/json")
        with LOCK:
            REQUESTS.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}})
        match = re.fullmatch(r"/range/([0-9A-Fa-f]{5})", self.path)
        if not match:
            return self.answer(400, "The hash prefix was not in a valid format")
        time.sleep(args.delay)
        prefix = match.group(1).upper()
        lines = [f"{full[5:]}:{count}" for full, count in BREACHED.items() if full.startswith(prefix)]
        if self.headers.get("Add-Padding", "").lower() == "true":
            lines += [f"{secrets.token_hex(18).upper()[:35]}:0" for _ in range(800)]
        self.answer(200, "\r\n".join(sorted(lines)))


server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
print("ready", server.server_address[1], flush=True)
server.serve_forever()
