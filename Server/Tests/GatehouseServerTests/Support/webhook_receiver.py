#!/usr/bin/env python3
"""A business's webhook endpoint, verifying what arrives with the Standard Webhooks reference library
(`standardwebhooks` on PyPI: `Webhook(secret).verify(body, headers)`), as a receiver written from the spec would.

    POST /redirect          307 to /hook;  POST /slow: 204 after 3 s;  POST /big?STATUS: STATUS with a 1 MiB body
    POST /hook              a delivery: verified against each secret it knows; answered with the status it was told
                            when one verifies (else 400 and the library's reason)
    POST /_test/secrets     {"secrets": ["whsec_…", …]}: the secrets it verifies with, in order
    POST /_test/status      {"status": 503}: what it answers a verified delivery (204 at first)
    GET  /_test/received    every request to /hook: its webhook-id, -timestamp, the payload's type, accountId and data, the
                            indices of the secrets that verified it, what it answered and the library's refusal

    python3 webhook_receiver.py --port 0
"""
import argparse
import json
import time
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks import Webhook, WebhookVerificationError

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, required=True)
args = parser.parse_args()

STATE = {"secrets": [], "status": 204, "received": []}
LOCK = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *_):
        pass

    def answer(self, status, body=b"", content_type="application/json"):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def body(self):
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def do_GET(self):
        if self.path == "/_test/received":
            with LOCK:
                return self.answer(200, json.dumps(STATE["received"]).encode())
        self.answer(404)

    def do_POST(self):
        data = self.body()
        if self.path == "/_test/secrets":
            with LOCK:
                STATE["secrets"] = json.loads(data)["secrets"]
            return self.answer(204)
        if self.path == "/_test/status":
            with LOCK:
                STATE["status"] = json.loads(data)["status"]
            return self.answer(204)
        if self.path == "/redirect":     # a receiver that moved: the delivery must not follow it
            self.send_response(307)
            self.send_header("Location", "/hook")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.path == "/slow":         # answers after 3 s, past the test's one-second timeout
            time.sleep(3)
            return self.answer(204)
        if self.path.startswith("/big"):  # a mebibyte of answer, with the status the query names
            return self.answer(int(self.path.split("?")[1]), b"x" * 1_048_576, "text/plain")
        if self.path.split("?")[0] != "/hook":
            return self.answer(404)
        headers = {k: v for k, v in self.headers.items()}
        with LOCK:
            secrets, status = list(STATE["secrets"]), STATE["status"]
        verified, refusal, payload = [], None, None
        for index, secret in enumerate(secrets):
            try:
                payload = Webhook(secret).verify(data, headers)
                verified.append(index)
            except WebhookVerificationError as error:
                refusal = str(error)
        answered = status if verified else 400
        record = {
            "id": self.headers.get("webhook-id"), "timestamp": self.headers.get("webhook-timestamp"),
            "type": (payload or {}).get("type"), "accountId": ((payload or {}).get("data") or {}).get("accountId"),
            "changed": ((payload or {}).get("data") or {}).get("changed"), "data": (payload or {}).get("data"),
            "verifiedWith": verified, "answered": answered, "refused": None if verified else refusal,
        }
        with LOCK:
            STATE["received"].append(record)
        self.answer(answered, b'{"ok": true}' if verified else json.dumps({"error": refusal}).encode())


server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
print(f"ready {server.server_address[1]}", flush=True)
server.serve_forever()
