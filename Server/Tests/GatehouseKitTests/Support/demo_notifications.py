#!/usr/bin/env python3
"""`gatehouse-demo notifications` in a pseudo-terminal against a `gatehouse serve` process in
development: Ann signs in and registers a push token through the demo; Bob asks her to be friends
and sends her a message over the API; the demo shows both pushes (the friend request, then the
message with its sender, text and badge) and where opening each leads. Exits 0 when both were seen."""
import argparse
import json
import os
import signal
import sys
import tempfile
import urllib.request

import pexpect
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "GatehouseServerTests", "Support"))
from server_process import free_port, start_server  # noqa: E402 (one way to start a test server and know it answers)

p = argparse.ArgumentParser()
p.add_argument("--demo", required=True)
p.add_argument("--gatehouse", required=True)
args = p.parse_args()
work = tempfile.mkdtemp(prefix="demo-notifications-")


PORT = free_port()
BASE = f"http://127.0.0.1:{PORT}"
ENV = {k: v for k, v in os.environ.items() if not k.startswith("GATEHOUSE_") and k not in ("DATABASE_URL", "PUBLIC_URL")}
ENV.update({"DATABASE_URL": os.path.join(work, "g.sqlite"), "GATEHOUSE_HOST": "127.0.0.1", "GATEHOUSE_PORT": str(PORT),
            "GATEHOUSE_ENV": "development", "GATEHOUSE_LOG_LEVEL": "warning", "GATEHOUSE_BCRYPT_COST": "4",
            "GATEHOUSE_DELIVERY_WAIT_SECONDS": "0", "GATEHOUSE_BLOB_DIR": os.path.join(work, "blobs"),
            "GATEHOUSE_PUSH_COALESCE_SECONDS": "1"})
server = start_server(args.gatehouse, work, ENV, os.path.join(work, "server.log"))


def call(method, path, body=None, token=None):
    request = urllib.request.Request(BASE + path, method=method, data=None if body is None else json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    if token:
        request.add_header("Authorization", "Bearer " + token)
    with urllib.request.urlopen(request, timeout=10) as r:
        text = r.read()
        return json.loads(text) if text else None


def person(tag, first):
    email = f"{tag}@example.com"
    call("POST", "/v1/signup/code", {"email": email})
    code = call("GET", f"/dev/outbox?to={tag}%40example.com&last=1")[0]["code"]
    return call("POST", "/v1/signup", {"email": email, "code": code, "password": "Secret-42!", "tag": tag, "firstName": first,
                                       "lastName": "Smith", "locale": "en"})


demo = None
step = "setup"
try:
    ann = person("ann", "Ann")
    bob = person("bob", "Bob")

    step = "the demo signs in and registers a token"
    demo = pexpect.spawn(args.demo, ["notifications", "--server", BASE, "--language", "en", "--identifier", "ann@example.com",
                                     "--count", "2"], env={**ENV, "GATEHOUSE_DEMO_PASSWORD": "Secret-42!", "TERM": "xterm"},
                         encoding="utf-8", timeout=60)
    demo.expect("Listening for this device's pushes")
    devices = call("GET", "/v1/me/devices", token=ann["token"])["items"]
    assert len(devices) == 1 and devices[0]["platform"] == "fcm", devices

    step = "Bob asks Ann to be friends: the push shows"
    call("POST", "/v1/friends/requests", {"personId": ann["account"]["id"]}, token=bob["token"])
    demo.expect("Friend request — Bob Smith wants to be your friend")
    demo.expect("opens the friend requests")

    step = "Ann accepts over the API; Bob writes: the message's push shows with its sender, text and badge"
    call("POST", "/v1/friends/requests", {"personId": bob["account"]["id"]}, token=ann["token"])
    chat = call("POST", "/v1/chats", {"personId": ann["account"]["id"]}, token=bob["token"])
    call("POST", f"/v1/chats/{chat['id']}/messages", {"text": "see you at 7", "clientMessageId": "m1"}, token=bob["token"])
    demo.expect(r"Bob Smith — see you at 7   \[1\]")
    demo.expect("opens the chat " + chat["id"].lower()[:8])
    demo.expect("Signed out: the session and its device are gone.")
    demo.expect(pexpect.EOF)

    step = "the run left nothing behind: no device, no session of the demo's"
    def leftovers():
        devices = call("GET", "/v1/me/devices", token=ann["token"])["items"]
        sessions = [s for s in call("GET", "/v1/sessions", token=ann["token"])["sessions"] if s.get("device") == "gatehouse-demo notifications"]
        return devices, sessions
    assert leftovers() == ([], []), leftovers()

    step = "a run ended by Ctrl-C signs out too"
    demo = pexpect.spawn(args.demo, ["notifications", "--server", BASE, "--language", "en", "--identifier", "ann@example.com"],
                         env={**ENV, "GATEHOUSE_DEMO_PASSWORD": "Secret-42!", "TERM": "xterm"}, encoding="utf-8", timeout=60)
    demo.expect("Listening for this device's pushes")
    assert len(leftovers()[0]) == 1, leftovers()
    demo.sendintr()
    demo.expect("Signed out: the session and its device are gone.")
    demo.expect(pexpect.EOF)
    demo.close()
    assert demo.exitstatus == 0, (demo.exitstatus, demo.signalstatus)
    assert leftovers() == ([], []), leftovers()
    print("notifications demo session passed")
except Exception as error:
    sys.stderr.write(f"notifications demo failed at: {step}: {type(error).__name__}: {error}\n")
    if demo is not None:
        sys.stderr.write((demo.before or "") + "\n")
    sys.stderr.write(open(os.path.join(work, "server.log")).read()[-3000:] + "\n")
    sys.exit(1)
finally:
    if demo is not None and demo.isalive():
        demo.terminate(force=True)
    if server.poll() is None:
        server.send_signal(signal.SIGTERM)
        server.wait(10)
