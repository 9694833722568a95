#!/usr/bin/env python3
"""Two people, two `gatehouse-demo messenger` processes in pseudo-terminals, one real
`gatehouse serve` process: they find each other by tag, become friends, open a chat, exchange
messages that appear live on the other side, reply, edit, delete and forward; then the server is
stopped, one side writes two messages offline (shown pending), the server comes back, and both
messages arrive exactly once on the other side. Then one attaches a file by its path; the other sees
it in the chat, opens the profile behind the chat's header and the attachment there, and the file
saved is byte for byte the one sent. Exits 0 when every step was seen."""
import argparse
import datetime
import json
import os
import signal
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

import pexpect
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "GatehouseServerTests", "Support"))
from server_process import free_port, start_server as start_server_process  # noqa: E402 (one way to start a test server and know it answers)

p = argparse.ArgumentParser()
p.add_argument("--demo", required=True)
p.add_argument("--gatehouse", required=True)
args = p.parse_args()
args.demo, args.gatehouse = os.path.abspath(args.demo), os.path.abspath(args.gatehouse)

UP, DOWN, LEFT, RIGHT, ESC, ENTER, CTRL_U, CTRL_C = "\x1b[A", "\x1b[B", "\x1b[D", "\x1b[C", "\x1b", "\r", "\x15", "\x03"
work = tempfile.mkdtemp(prefix="demo-messenger-")
transcripts = {}


PORT = free_port()
BASE = f"http://127.0.0.1:{PORT}"
SERVER_ENV = {k: v for k, v in os.environ.items() if not k.startswith("GATEHOUSE_") and k not in ("DATABASE_URL", "PUBLIC_URL")}
SERVER_ENV.update({
    "DATABASE_URL": os.path.join(work, "gatehouse.sqlite"), "GATEHOUSE_HOST": "127.0.0.1", "GATEHOUSE_PORT": str(PORT),
    "GATEHOUSE_ENV": "development", "GATEHOUSE_LOG_LEVEL": "warning", "GATEHOUSE_BCRYPT_COST": "4",
    "GATEHOUSE_DELIVERY_WAIT_SECONDS": "0", "GATEHOUSE_BLOB_DIR": os.path.join(work, "blobs"),
})
server = None


def start_server():
    global server
    server = start_server_process(args.gatehouse, work, SERVER_ENV, os.path.join(work, "server.log"))


def stop_server():
    server.send_signal(signal.SIGTERM)
    server.wait(15)


def call(method, path, body=None, token=None):
    request = urllib.request.Request(BASE + path, method=method, data=None if body is None else json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json", "Accept-Language": "en"})
    if token:
        request.add_header("Authorization", "Bearer " + token)
    with urllib.request.urlopen(request, timeout=10) as r:
        text = r.read()
        return json.loads(text) if text else None


def signup(tag, first, last):
    """An account made through the API, its session written where the demo keeps it."""
    email = f"{tag}@example.com"
    call("POST", "/v1/signup/code", {"email": email})
    code = call("GET", "/dev/outbox?to=" + urllib.parse.quote(email, safe="@") + "&last=1")[0]["code"]
    session = call("POST", "/v1/signup", {"email": email, "code": code, "password": "Secret-42!", "firstName": first,
                                          "lastName": last, "tag": tag, "locale": "en"})
    folder = os.path.join(work, tag)
    os.makedirs(folder)
    expires = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=12)).strftime("%Y-%m-%dT%H:%M:%SZ")
    with open(os.path.join(folder, "session.json"), "w") as f:
        json.dump({"token": session["token"], "expiresAt": expires}, f)
    return session["token"], os.path.join(folder, "session.json")


class Demo:
    """One demo in a pseudo-terminal. A thread reads everything it draws at once, as a terminal
    does (a full-screen app whose output is not read stalls on a full pty); `expect` looks for a
    text in what was drawn since the previous match."""

    def __init__(self, name, session_file):
        self.name = name
        # Each in a folder of its own: an opened attachment is saved under downloads/ there.
        self.folder = os.path.join(work, name)
        os.makedirs(self.folder, exist_ok=True)
        self.child = pexpect.spawn(args.demo, ["messenger", "--server", BASE, "--language", "en", "--session-file", session_file],
                                   encoding="utf-8", dimensions=(60, 120), cwd=self.folder)
        self.output = ""
        self.position = 0
        self.ended = False
        self.lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        while True:
            try:
                text = self.child.read_nonblocking(65536, timeout=0.2)
            except pexpect.TIMEOUT:
                continue
            except (pexpect.EOF, OSError):
                self.ended = True
                return
            with self.lock:
                self.output += text

    def expect(self, text, timeout=20):
        deadline = time.time() + timeout
        while time.time() < deadline:
            with self.lock:
                found = self.output.find(text, self.position)
                if found >= 0:
                    self.position = found + len(text)
                    return
            time.sleep(0.05)
        raise TimeoutError(f"{self.name}: no {text!r} within {timeout}s")

    def expect_end(self, timeout=20):
        deadline = time.time() + timeout
        while time.time() < deadline and not self.ended:
            time.sleep(0.05)
        if not self.ended:
            raise TimeoutError(f"{self.name} did not exit")

    def send(self, text):
        self.child.send(text)

    def screen(self):
        """The last frame drawn, without its control sequences and blank lines."""
        with self.lock:
            frame = self.output.split("\x1b[H")[-1]
        for sequence in ("\x1b[K", "\x1b[J", "\x1b[?25l", "\x1b[?25h", "\x1b[?1049h", "\x1b[?1049l", "\x1b[2J"):
            frame = frame.replace(sequence, "")
        return "\n".join(line for line in frame.replace("\r", "").split("\n") if line.strip())


def spawn(name, session_file):
    demo = Demo(name, session_file)
    transcripts[name] = demo
    return demo


def press(demo, *keys):
    for key in keys:
        demo.send(key)
        time.sleep(0.15)


def type_text(demo, text):
    demo.send(text)
    time.sleep(0.2)


start_server()
ann_token, ann_session = signup("ann", "Ann", "Lee")
bob_token, bob_session = signup("bob", "Bob", "Kim")
ann = spawn("ann", ann_session)
bob = spawn("bob", bob_session)
step = "start"
try:
    step = "both open on the Chats tab"
    ann.expect("[Chats]")
    bob.expect("[Chats]")

    step = "Ann finds Bob by tag and asks to be friends"
    press(ann, LEFT)
    ann.expect("[Friends]")
    ann.expect("You have no friends yet. Tap + to find people.")
    press(ann, "+")
    ann.expect("Type a name or a tag.")
    type_text(ann, "@bob")
    ann.expect("> Bob Kim  @bob")
    press(ann, ENTER)
    ann.expect("> Add to friends")
    press(ann, ENTER)
    ann.expect("Request sent")

    step = "Bob sees the request live and accepts it"
    press(bob, LEFT)
    bob.expect("Want to be your friends")
    bob.expect("> Ann Lee  @ann")
    press(bob, ENTER)
    bob.expect("> Accept")
    press(bob, ENTER)
    bob.expect("Your friend")
    press(bob, DOWN)
    bob.expect("> Block")
    press(bob, DOWN)
    bob.expect("> Write a message")

    step = "Bob opens the chat and writes"
    press(bob, ENTER)
    bob.expect("No messages yet. Say hello!")
    type_text(bob, "Hello Ann")
    press(bob, ENTER)

    step = "Ann sees it in her chat list, opens the chat and answers"
    press(ann, ESC, ESC, RIGHT)
    ann.expect("[Chats")
    ann.expect("Hello Ann")
    press(ann, ENTER)
    ann.expect("Bob Kim   @bob")
    type_text(ann, "Hi Bob")
    press(ann, ENTER)
    bob.expect("Hi Bob")

    step = "Ann replies to Bob's message"
    press(ann, UP, UP, ENTER)
    ann.expect("> Reply")
    press(ann, ENTER)
    ann.expect("Reply to Bob Kim")
    type_text(ann, "Nice to meet you")
    press(ann, ENTER)
    bob.expect("┆ You: Hello Ann")
    bob.expect("Nice to meet you")

    step = "Ann edits her reply"
    press(ann, UP, ENTER)
    ann.expect("> Reply")
    press(ann, DOWN)
    ann.expect("> Edit")
    press(ann, ENTER)
    ann.expect("Editing")
    press(ann, CTRL_U)
    type_text(ann, "Glad to meet you")
    press(ann, ENTER)
    bob.expect("Glad to meet you  (edited)")

    step = "Ann deletes 'Hi Bob' for everyone"
    press(ann, UP, UP, ENTER)
    ann.expect("> Reply")
    press(ann, DOWN, DOWN, DOWN, DOWN)
    ann.expect("> Delete for everyone")
    press(ann, ENTER)
    bob.expect("Message deleted")

    step = "Bob forwards Ann's message back into the chat"
    press(bob, UP, ENTER)
    bob.expect("> Reply")
    press(bob, DOWN)
    bob.expect("> Forward")
    press(bob, ENTER)
    bob.expect("[ ] Ann Lee")
    press(bob, " ")
    bob.expect("[x] Ann Lee")
    press(bob, ENTER)
    ann.expect("Forwarded from You")

    step = "the server stops; both sides say offline"
    stop_server()
    ann.expect("Offline: showing saved data")
    bob.expect("Offline: showing saved data")

    step = "Ann writes two messages offline; they are shown pending"
    type_text(ann, "offline one")
    press(ann, ENTER)
    type_text(ann, "offline two")
    press(ann, ENTER)
    ann.expect("offline two")
    ann.expect("Sending…")

    step = "the server comes back; both messages reach Bob"
    start_server()
    # The clients come back on their own backoff (0.5 s growing to 10 s and then 30 s, times 0.5-1.5): on a loaded
    # machine the server may have been away long enough for the next try to be half a minute off.
    bob.expect("offline one", timeout=60)
    bob.expect("offline two")

    step = "Ann attaches a file by its path and sends it with a caption"
    attachment = os.path.join(work, "report.bin")
    payload = bytes((i * 31 + 7) % 256 for i in range(200_000))
    with open(attachment, "wb") as f:
        f.write(payload)
    type_text(ann, "/attach " + attachment)
    press(ann, ENTER)
    ann.expect("📎 report.bin  ")
    type_text(ann, "the report")
    press(ann, ENTER)
    bob.expect("the report")
    bob.expect("📎 report.bin")

    step = "Bob opens the profile behind the chat's header, and the attachment there"
    press(bob, "\t")
    bob.expect("Attachments  (Enter opens)")
    press(bob, DOWN, DOWN, DOWN, DOWN, DOWN)
    bob.expect("> 📎 report.bin")
    press(bob, ENTER)
    bob.expect("saved to ")
    with open(os.path.join(bob.folder, "downloads", "report.bin"), "rb") as f:
        assert f.read() == payload, "the opened attachment is not the file sent"

    step = "exactly once, in order, on the server"
    chats = call("GET", "/v1/chats", token=bob_token)["items"]
    texts = [m["text"] for m in call("GET", f"/v1/chats/{chats[0]['id']}/messages", token=bob_token)["items"]]
    assert texts.count("offline one") == 1 and texts.count("offline two") == 1, texts
    assert texts.index("offline one") < texts.index("offline two"), texts
    assert "Glad to meet you" in texts and "Hello Ann" in texts, texts

    step = "quit"
    for demo in (ann, bob):
        press(demo, CTRL_C)
        demo.expect_end()
    print("messenger demo session passed")
except (TimeoutError, pexpect.ExceptionPexpect, AssertionError) as error:
    sys.stderr.write(f"demo messenger failed at: {step}: {type(error).__name__}: {error}\n")
    for name, demo in transcripts.items():
        sys.stderr.write(f"--- {name}'s screen ---\n{demo.screen()}\n")
    sys.exit(1)
finally:
    for demo in transcripts.values():
        if demo.child.isalive():
            demo.child.terminate(force=True)
    if server and server.poll() is None:
        server.kill()
