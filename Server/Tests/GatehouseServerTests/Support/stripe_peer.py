#!/usr/bin/env python3
"""A local Stripe for the wallet's top-ups, speaking the parts of Stripe's API the server uses as
Stripe documents them, over HTTP on --port:

- `POST /v1/checkout/sessions` (form-encoded `mode=payment`, one `line_items[0]` with
  `price_data[currency|unit_amount|product_data][name]` and `quantity`, `success_url`,
  `cancel_url`, `client_reference_id`, `metadata[…]`, `payment_intent_data[metadata][…]`), with
  `Authorization: Bearer <secret key>`; an `Idempotency-Key` answers the first session again for
  the same parameters and 400 `idempotency_error` for others. Answers a Checkout Session object.
- `POST /v1/refunds` (`payment_intent`, `amount`, `metadata[…]`), idempotent the same way; a
  refund beyond what is left of the charge is 400 `charge_already_refunded`. Answers a Refund and
  then sends `refund.created`, as Stripe does.

Notifications go to the webhook URL the test sets, with a `Stripe-Signature` header made as
Stripe's documentation says (`t=<time>,v1=<HMAC-SHA256 of "<time>.<body>" keyed by the endpoint
secret>`), checked before sending with the official `stripe` library's own verifier. Test controls
(`/_test/…`, JSON): `config` (webhook URL, the server's clock), `pay/<session>`, `expire/<session>`,
`resend` (the last event again, re-signed, as Stripe retries), `send` (any event, optionally
signed with another secret or at another time), `refund` (a refund made in Stripe's dashboard),
`requests` (every API request received)."""
import argparse
import json
import secrets
import threading
import time
import urllib.parse
import urllib.request
import hashlib
import hmac
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import stripe

p = argparse.ArgumentParser()
p.add_argument("--port", type=int, required=True)
p.add_argument("--secret-key", required=True)
p.add_argument("--webhook-secret", required=True)
args = p.parse_args()

lock = threading.Lock()
state = {"webhook": None, "offset": 0.0, "sessions": {}, "refunds": {}, "idempotency": {}, "requests": [], "last": None, "charges": {}}


def now():
    return int(time.time() + state["offset"])


def sign(payload: bytes, secret: str, timestamp: int) -> str:
    signature = hmac.new(secret.encode("utf-8"), f"{timestamp}.".encode() + payload, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={signature}"


def deliver(event, secret=None, timestamp=None, header=None):
    """Sends one event to the webhook; answers the server's status and body."""
    payload = json.dumps(event, indent=2).encode()  # Stripe's bodies are pretty-printed: the signature covers the bytes as sent
    timestamp = now() if timestamp is None else timestamp
    if header is None:
        header = sign(payload, secret or args.webhook_secret, timestamp)
        if secret is None:
            # The official library agrees this is Stripe's signature (no tolerance: the time is the test's).
            stripe.WebhookSignature.verify_header(payload.decode(), header, args.webhook_secret, tolerance=None)
    request = urllib.request.Request(state["webhook"], data=payload, method="POST",
                                     headers={"Content-Type": "application/json; charset=utf-8", "Stripe-Signature": header,
                                              "User-Agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return {"status": response.status, "body": response.read().decode()}
    except urllib.error.HTTPError as error:
        return {"status": error.code, "body": error.read().decode()}


def event(kind, obj):
    return {"id": "evt_" + secrets.token_hex(12), "object": "event", "api_version": "2024-06-20", "created": now(),
            "data": {"object": obj}, "livemode": False, "pending_webhooks": 1, "request": {"id": None, "idempotency_key": None}, "type": kind}


def send_and_remember(ev):
    with lock:
        state["last"] = ev
    return deliver(ev)


def form_dict(body: str):
    """Stripe's nested form names, flattened: `metadata[topup]` stays a key."""
    return {k: v[0] for k, v in urllib.parse.parse_qs(body, keep_blank_values=True).items()}


def nested(fields, prefix):
    return {k[len(prefix) + 1:-1]: v for k, v in fields.items() if k.startswith(prefix + "[") and k.count("[") == prefix.count("[") + 1}


def error(kind, message, param=None, status=400):
    return status, {"error": {"type": kind, "message": message, **({"param": param} if param else {})}}


def create_session(fields):
    required = ["mode", "line_items[0][price_data][currency]", "line_items[0][price_data][unit_amount]",
                "line_items[0][price_data][product_data][name]", "line_items[0][quantity]", "success_url"]
    for name in required:
        if not fields.get(name):
            return error("invalid_request_error", f"Missing required param: {name}.", name)
    if fields["mode"] != "payment":
        return error("invalid_request_error", "Invalid mode", "mode")
    amount = int(fields["line_items[0][price_data][unit_amount]"]) * int(fields["line_items[0][quantity]"])
    sid = "cs_test_" + secrets.token_hex(16)
    session = {
        "id": sid, "object": "checkout.session", "amount_subtotal": amount, "amount_total": amount,
        "currency": fields["line_items[0][price_data][currency]"], "client_reference_id": fields.get("client_reference_id"),
        "created": now(), "expires_at": now() + 86400, "livemode": False, "metadata": nested(fields, "metadata"), "mode": "payment",
        "payment_intent": None, "payment_status": "unpaid", "status": "open", "success_url": fields["success_url"],
        "cancel_url": fields.get("cancel_url"), "url": f"https://checkout.stripe.com/c/pay/{sid}",
        "_intent_metadata": nested(fields, "payment_intent_data[metadata]"),
    }
    state["sessions"][sid] = session
    return 200, public(session)


def public(obj):
    return {k: v for k, v in obj.items() if not k.startswith("_")}


def create_refund(fields):
    intent = fields.get("payment_intent")
    charge = state["charges"].get(intent)
    if not charge:
        return error("invalid_request_error", f"No such payment_intent: '{intent}'", "payment_intent", 404)
    amount = int(fields.get("amount") or (charge["amount"] - charge["refunded"]))
    if amount <= 0 or charge["refunded"] + amount > charge["amount"]:
        return error("invalid_request_error", "Refund amount is greater than unrefunded amount on charge", "amount")
    charge["refunded"] += amount
    refund = {"id": "re_" + secrets.token_hex(12), "object": "refund", "amount": amount, "charge": charge["id"], "created": now(),
              "currency": charge["currency"], "metadata": nested(fields, "metadata"), "payment_intent": intent, "status": "succeeded"}
    state["refunds"][refund["id"]] = refund
    # Stripe tells the webhook too, a moment after answering.
    threading.Timer(1.0, lambda: send_and_remember(event("refund.created", refund))).start()
    return 200, refund


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def answer(self, status, obj):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Request-Id", "req_" + secrets.token_hex(8))
        self.end_headers()
        self.wfile.write(data)

    def body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length).decode() if length else ""

    def do_GET(self):
        if self.path == "/_test/requests":
            with lock:
                return self.answer(200, state["requests"])
        self.answer(404, {"error": {"type": "invalid_request_error", "message": "Unrecognized request URL"}})

    def do_POST(self):
        raw = self.body()
        if self.path.startswith("/_test/"):
            return self.control(self.path[len("/_test/"):], json.loads(raw or "{}"))
        with lock:
            state["requests"].append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "form": form_dict(raw)})
            if self.headers.get("Authorization") != "Bearer " + args.secret_key:
                return self.answer(*error("invalid_request_error", "Invalid API Key provided", status=401))
            if self.headers.get("Content-Type", "").split(";")[0] != "application/x-www-form-urlencoded":
                return self.answer(*error("invalid_request_error", "Invalid request: not form-encoded"))
            key = self.headers.get("Idempotency-Key")
            if key and (self.path, key) in state["idempotency"]:
                earlier_body, status, obj = state["idempotency"][(self.path, key)]
                if earlier_body != raw:
                    return self.answer(*error("idempotency_error", "Keys for idempotent requests can only be used with the same parameters they were first used with."))
                return self.answer(status, obj)
            fields = form_dict(raw)
            if self.path == "/v1/checkout/sessions":
                status, obj = create_session(fields)
            elif self.path == "/v1/refunds":
                status, obj = create_refund(fields)
            else:
                status, obj = error("invalid_request_error", "Unrecognized request URL", status=404)
            if key and status < 500:
                state["idempotency"][(self.path, key)] = (raw, status, obj)
        self.answer(status, obj)

    def control(self, what, body):
        if what == "config":
            state["webhook"] = body["webhook"]
            state["offset"] = body.get("now", time.time()) - time.time()
            return self.answer(200, {})
        if what.startswith("pay/"):
            with lock:
                session = state["sessions"][what[4:]]
                intent = "pi_" + secrets.token_hex(12)
                session.update(status="complete", payment_status="paid", payment_intent=intent)
                state["charges"][intent] = {"id": "ch_" + secrets.token_hex(12), "amount": body.get("amount", session["amount_total"]),
                                            "currency": session["currency"], "refunded": 0}
                obj = public(session)
                if "amount" in body:  # a tampered total, to see it refused
                    obj["amount_total"] = body["amount"]
            return self.answer(200, send_and_remember(event("checkout.session.completed", obj)))
        if what.startswith("expire/"):
            with lock:
                session = state["sessions"][what[7:]]
                session.update(status="expired")
            return self.answer(200, send_and_remember(event("checkout.session.expired", public(session))))
        if what == "resend":
            return self.answer(200, deliver(state["last"]))
        if what == "send":
            return self.answer(200, deliver(body["event"], secret=body.get("secret"), timestamp=body.get("timestamp"), header=body.get("header")))
        if what == "last":
            return self.answer(200, state["last"] or {})
        if what == "refund":
            with lock:
                status, obj = create_refund({"payment_intent": body["payment_intent"], "amount": str(body["amount"])})
            return self.answer(status, obj)
        self.answer(404, {})


server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
print("ready", server.server_address[1], flush=True)
server.serve_forever()
