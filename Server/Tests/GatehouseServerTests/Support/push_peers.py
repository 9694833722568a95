#!/usr/bin/env python3
"""Local stand-ins for Apple's and Google's push services, checking what their documentation
requires, over HTTP/2 and TLS (hypercorn), so the server's push clients are tested against a real
protocol peer. Writes into --dir: a CA and its certificate (ca.pem) for the client to trust, the
APNs signing key (apns.p8) with its key id and team id (apns.json), a Google service account
(fcm.json), and every request it judged (received.jsonl), then `ready` holding the port it listens on (--port 0:
one the system chose, so that no other process can have taken it in between).

APNs (`POST /3/device/{token}`): HTTP/2; `authorization: bearer` an ES256 JWT whose signature
verifies with the key's public half, header `alg` ES256 and `kid` the key id, claims `iss` the
team and `iat` within the hour; `apns-topic` the bundle id, `apns-push-type` alert,
`apns-priority` 5 or 10, `apns-expiration` a number; a JSON payload of at most 4,096 bytes with
`aps.alert.title` and `aps.alert.body`. A token starting `dead` answers 410 Unregistered, `bad0`
400 BadDeviceToken, `cafe` 429 twice (Retry-After 1) and then 200; others 200.

OAuth (`POST /token`): the JWT-bearer grant; the RS256 assertion verifies with the account's
public key, `iss` its client email, `scope` FCM's, `aud` this endpoint, `exp` after `iat` by at
most an hour and not past. FCM (`POST /v1/projects/{project}/messages:send`): a bearer token this
endpoint issued, `message.token`, `message.notification.title/body`, string `data` values. A token
starting `gone` answers 404 UNREGISTERED, `invalid` 400 INVALID_ARGUMENT on message.token, `quota`
429 QUOTA_EXCEEDED once (Retry-After 1); others 200."""
import argparse
import asyncio
import base64
import datetime
import json
import os
import secrets
import socket
import time
import urllib.parse

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from cryptography.x509.oid import NameOID
import ipaddress

p = argparse.ArgumentParser()
p.add_argument("--port", type=int, required=True)
p.add_argument("--dir", required=True)
args = p.parse_args()
os.makedirs(args.dir, exist_ok=True)
# The listening socket first: the files below name its port.
listening = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
listening.bind(("127.0.0.1", args.port))
BASE = f"https://127.0.0.1:{listening.getsockname()[1]}"
TEAM, KEY_ID, BUNDLE = "TEAM123456", "KEY1234567", "com.example.gatehouse"
FCM_SCOPE = "https://www.googleapis.com/auth/firebase.messaging"


def write(name, data):
    with open(os.path.join(args.dir, name), "wb" if isinstance(data, bytes) else "w") as f:
        f.write(data)


# TLS: a CA, and a certificate for 127.0.0.1 it signs.
now = datetime.datetime.now(datetime.timezone.utc)
ca_key = ec.generate_private_key(ec.SECP256R1())
ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "push peers test CA")])
ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
      .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
      .not_valid_after(now + datetime.timedelta(days=2)).add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
      .sign(ca_key, hashes.SHA256()))
leaf_key = ec.generate_private_key(ec.SECP256R1())
leaf = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])).issuer_name(ca_name)
        .public_key(leaf_key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]), critical=False)
        .sign(ca_key, hashes.SHA256()))
write("ca.pem", ca.public_bytes(serialization.Encoding.PEM))
write("cert.pem", leaf.public_bytes(serialization.Encoding.PEM))
write("key.pem", leaf_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))

# APNs: the team's .p8 key (PKCS#8 P-256, as Apple gives it).
apns_key = ec.generate_private_key(ec.SECP256R1())
write("apns.p8", apns_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
write("apns.json", json.dumps({"keyId": KEY_ID, "teamId": TEAM, "bundleId": BUNDLE, "endpoint": BASE}))

# FCM: a service account, as the Firebase console downloads it.
rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
EMAIL = "gatehouse-push@test-project.iam.gserviceaccount.com"
write("fcm.json", json.dumps({
    "type": "service_account", "project_id": "test-project", "private_key_id": "abc123",
    "private_key": rsa_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode(),
    "client_email": EMAIL, "client_id": "1", "token_uri": BASE + "/token",
}))

issued = set()
counts = {}


def b64(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def record(entry):
    with open(os.path.join(args.dir, "received.jsonl"), "a") as f:
        f.write(json.dumps(entry) + "\n")


def check_apns_jwt(token):
    head, claims, signature = token.split(".")
    header = json.loads(b64(head))
    body = json.loads(b64(claims))
    raw = b64(signature)
    assert header == {"alg": "ES256", "kid": KEY_ID}, header
    assert len(raw) == 64, len(raw)
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    apns_key.public_key().verify(der, (head + "." + claims).encode(), ec.ECDSA(hashes.SHA256()))
    assert body["iss"] == TEAM and abs(time.time() - body["iat"]) < 3600, body
    return body


def check_assertion(assertion):
    head, claims, signature = assertion.split(".")
    header = json.loads(b64(head))
    body = json.loads(b64(claims))
    assert header["alg"] == "RS256" and header.get("kid") == "abc123", header
    rsa_key.public_key().verify(b64(signature), (head + "." + claims).encode(), padding.PKCS1v15(), hashes.SHA256())
    assert body["iss"] == EMAIL and body["scope"] == FCM_SCOPE and body["aud"] == BASE + "/token", body
    assert 0 < body["exp"] - body["iat"] <= 3600 and body["exp"] > time.time(), body
    return body


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
    path = scope["path"]

    async def answer(status, obj=None, extra=()):
        data = json.dumps(obj).encode() if obj is not None else b""
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json")] + [(k.encode(), v.encode()) for k, v in extra]})
        await send({"type": "http.response.body", "body": data})

    entry = {"path": path, "http": scope.get("http_version"), "headers": {k: v for k, v in headers.items() if k != "authorization"}}
    try:
        if path.startswith("/3/device/"):
            device = path[len("/3/device/"):]
            entry["service"] = "apns"
            entry["device"] = device
            assert scope.get("http_version") == "2", "APNs speaks HTTP/2 only"
            auth = headers.get("authorization", "")
            assert auth.startswith("bearer "), "no provider token"
            entry["jwt"] = check_apns_jwt(auth[len("bearer "):])
            entry["jwtToken"] = auth[len("bearer "):]
            assert headers.get("apns-topic") == BUNDLE, headers.get("apns-topic")
            assert headers.get("apns-push-type") == "alert"
            assert headers.get("apns-priority") in ("5", "10")
            assert headers.get("apns-expiration", "x").isdigit()
            assert len(body) <= 4096, f"payload of {len(body)} bytes"
            payload = json.loads(body)
            assert payload["aps"]["alert"]["title"] and "body" in payload["aps"]["alert"], payload
            entry["payload"] = payload
            entry["ok"] = True
            record(entry)
            if device.startswith("dead"):
                return await answer(410, {"reason": "Unregistered", "timestamp": int(time.time() * 1000)})
            if device.startswith("bad0"):
                return await answer(400, {"reason": "BadDeviceToken"})
            if device.startswith("cafe"):
                counts[device] = counts.get(device, 0) + 1
                if counts[device] <= 2:
                    return await answer(429, {"reason": "TooManyRequests"}, [("retry-after", "1")])
            return await answer(200, None, [("apns-id", "00000000-0000-0000-0000-000000000001")])
        if path == "/token":
            entry["service"] = "oauth"
            form = urllib.parse.parse_qs(body.decode())
            assert form["grant_type"] == ["urn:ietf:params:oauth:grant-type:jwt-bearer"], form
            entry["assertion"] = check_assertion(form["assertion"][0])
            token = "ya29." + secrets.token_urlsafe(24)
            issued.add(token)
            entry["ok"] = True
            record(entry)
            return await answer(200, {"access_token": token, "expires_in": 3599, "token_type": "Bearer"})
        if path == "/v1/projects/test-project/messages:send":
            entry["service"] = "fcm"
            auth = headers.get("authorization", "")
            assert auth.startswith("Bearer ") and auth[len("Bearer "):] in issued, "not a token this endpoint issued"
            message = json.loads(body)["message"]
            assert message["token"] and message["notification"]["title"], message
            assert all(isinstance(v, str) for v in message.get("data", {}).values()), "data values are strings"
            entry["message"] = message
            entry["ok"] = True
            record(entry)
            device = message["token"]
            if device.startswith("gone"):
                return await answer(404, {"error": {"code": 404, "message": "Requested entity was not found.", "status": "NOT_FOUND",
                                                     "details": [{"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": "UNREGISTERED"}]}})
            if device.startswith("invalid"):
                return await answer(400, {"error": {"code": 400, "message": "The registration token is not a valid FCM registration token",
                                                     "status": "INVALID_ARGUMENT", "details": [
                                                         {"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": "INVALID_ARGUMENT"},
                                                         {"@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": [{"field": "message.token"}]}]}})
            if device.startswith("quota"):
                counts[device] = counts.get(device, 0) + 1
                if counts[device] <= 1:
                    return await answer(429, {"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "details": [
                        {"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": "QUOTA_EXCEEDED"}]}}, [("retry-after", "1")])
            return await answer(200, {"name": "projects/test-project/messages/0:" + secrets.token_hex(8)})
        return await answer(404, {"error": "no such path"})
    except AssertionError as error:
        entry["ok"] = False
        entry["problem"] = str(error)
        record(entry)
        return await answer(400, {"reason": "TestPeerRefused", "problem": str(error)})
    except Exception as error:
        entry["ok"] = False
        entry["problem"] = f"{type(error).__name__}: {error}"
        record(entry)
        return await answer(403, {"reason": "InvalidProviderToken", "problem": entry["problem"]})


async def main():
    from hypercorn.asyncio import serve
    from hypercorn.config import Config
    config = Config()
    config.bind = [f"fd://{listening.fileno()}"]
    config.certfile = os.path.join(args.dir, "cert.pem")
    config.keyfile = os.path.join(args.dir, "key.pem")
    config.alpn_protocols = ["h2", "http/1.1"]
    config.loglevel = "WARNING"
    parent = os.getppid()

    async def orphaned():
        while os.getppid() == parent:
            await asyncio.sleep(0.5)
    write("ready", str(listening.getsockname()[1]))
    await serve(app, config, shutdown_trigger=orphaned)

asyncio.run(main())
