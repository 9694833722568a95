#!/usr/bin/env python3
"""A business's webhook endpoint, verifying what arrives with the Standard Webhooks reference library
(`standardwebhooks` on PyPI: `Webhook(secret).verify(body, headers)`), as a receiver written from the spec would.

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
