#!/usr/bin/env python3
"""Two people, two `gatehouse-demo wallet` processes in pseudo-terminals, one real `gatehouse serve`
process. Ann registers through the demo's sign-up screen, Bob logs in with an account made over
the API; each adds info, verifies a phone by SMS code (the send and confirm buttons refuse until
their time) and attaches a wallet. The operator credits Ann with `gatehouse wallet credit`; Bob
tops his wallet up with 300 ₽ through the payment provider (development's local page); Ann
sends Bob 250,50 ₽; Bob asks Ann for 100 ₽ back as a loan; Ann pays the request in their dialog;
Bob repays the loan. Both sides' balances, dialogs and request states agree with the server's
ledger at the end. Exits 0 when every step was seen."""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import urllib.parse
import urllib.request

import pexpect
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "GatehouseServerTests", "Support"))
from server_process import free_port, start_server  # noqa: E402 (one way to start a test server and know it answers)

p = argparse.ArgumentParser()
p.add_argument("--demo", required=True)
p.add_argument("--gatehouse", required=True)
args = p.parse_args()
args.demo, args.gatehouse = os.path.abspath(args.demo), os.path.abspath(args.gatehouse)
work = tempfile.mkdtemp(prefix="demo-wallet-")


PORT = free_port()
BASE = f"http://127.0.0.1:{PORT}"
ENV = {k: v for k, v in os.environ.items() if not k.startswith("GATEHOUSE_") and k not in ("DATABASE_URL", "PUBLIC_URL")}
ENV.update({
    "DATABASE_URL": os.path.join(work, "gatehouse.sqlite"), "GATEHOUSE_HOST": "127.0.0.1", "GATEHOUSE_PORT": str(PORT),
    "GATEHOUSE_ENV": "development", "GATEHOUSE_LOG_LEVEL": "warning", "GATEHOUSE_BCRYPT_COST": "4",
    "GATEHOUSE_DELIVERY_WAIT_SECONDS": "0", "GATEHOUSE_BLOB_DIR": os.path.join(work, "blobs"),
})
server = start_server(args.gatehouse, work, ENV, os.path.join(work, "server.log"))
transcripts = {}


def call(method, path, body=None, token=None):
    request = urllib.request.Request(BASE + path, method=method, data=None if body is None else json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json", "Accept-Language": "en"})
    if token:
        request.add_header("Authorization", "Bearer " + token)
    with urllib.request.urlopen(request, timeout=10) as r:
        text = r.read()
        return json.loads(text) if text else None


class Demo:
    def __init__(self, name):
        self.name = name
        os.makedirs(os.path.join(work, name), exist_ok=True)
        self.session_file = os.path.join(work, name, "session.json")
        self.log = []
        transcripts[name] = self.log

    def start(self):
        self.child = pexpect.spawn(args.demo, ["wallet", "--server", BASE, "--language", "en", "--session-file", self.session_file],
                                   encoding="utf-8", timeout=30, dimensions=(60, 160))
        log = self.log
        self.child.logfile_read = type("Log", (), {"write": lambda _, s: log.append(s), "flush": lambda _: None})()

    def expect(self, text):
        self.child.expect_exact(text)

    def option(self, label):
        """Waits for the menu line with `label` and the prompt, and chooses it."""
        self.child.expect(r"(\d+)\) " + re.escape(label) + r"( \(unavailable\))?\r?\n")
        number, unavailable = self.child.match.group(1), self.child.match.group(2)
        if unavailable:
            raise AssertionError(f"{self.name}: {label!r} is unavailable")
        self.child.expect_exact("> ")
        self.child.sendline(number)

    def refused(self, label):
        """Waits for `label`, which must be shown unavailable, chooses it anyway and reads the reason."""
        self.child.expect(r"(\d+)\) " + re.escape(label) + r" \(unavailable\)\r?\n")
        number = self.child.match.group(1)
        self.child.expect_exact("> ")
        self.child.sendline(number)

    def answer(self, prompt, text):
        self.child.expect_exact(prompt)
        self.child.sendline(text)

    def quit(self):
        self.child.expect_exact("> ")
        self.child.sendline("q")
        self.child.expect(pexpect.EOF)


def png(width, height):
    """A small solid PNG, written by hand (zlib and CRC-32 from the standard library)."""
    import struct
    import zlib

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    rows = b"".join(b"\x00" + bytes((40, 160, 90)) * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def add_info_and_phone(demo, first, birthday, phone):
    demo.expect("== Profile ==")
    demo.option("Add info")
    demo.expect("== Add info ==")
    demo.option("Type the name and birthday")
    demo.answer("First name", first)
    demo.answer("Last name", "")
    demo.answer("Birthday (dd.mm.yyyy)", birthday)
    # The photo from the gallery: here an image file, by its path.
    picture = os.path.join(tempfile.mkdtemp(prefix="wallet-photo-"), "me.png")
    with open(picture, "wb") as f:
        f.write(png(24, 24))
    demo.option("Pick a photo (an image file)")
    demo.answer("Image file", picture)
    demo.expect("Photo: %d bytes picked" % os.path.getsize(picture))
    demo.option("Save")
    demo.expect(f"Birthday: {birthday}")
    demo.expect("Your info is saved.")
    # Back on "Add info", the photo is the server's now.
    demo.option("Add info")
    demo.expect("== Add info ==")
    demo.expect("Photo: set")
    demo.option("Back")
    # The wallet waits for a verified phone, and "Confirm" for a code that was sent.
    demo.refused("Attach wallet")
    demo.option("Add phone")
    demo.expect("== Add phone ==")
    demo.refused("Confirm")
    demo.expect("Send the code first, then type it.")
    demo.option("Type the phone and password")
    demo.answer("Phone number", phone)
    demo.answer("Your password", "Secret-42!")
    demo.option("Send code")
    demo.expect("Enter the code we sent by SMS to")
    demo.option("Fetch the code from the server's development outbox (stands in for the SMS)")
    demo.option("Confirm")
    demo.expect("is verified.")
    demo.option("Attach wallet")
    demo.expect("== Attach wallet ==")
    demo.option("Attach")
    demo.expect("The wallet is attached to")


failed = None
try:
    ann, bob = Demo("ann"), Demo("bob")

    # Ann registers through the demo.
    ann.start()
    ann.expect("== Log in ==")
    ann.option("Register")
    ann.expect("== Registration ==")
    ann.option("Fill in the form")
    for prompt, value in (("Email", "ann@example.com"), ("Last name", "Lee"), ("First name", "Ann"), ("Tag", "ann.lee"),
                          ("Password", "Secret-42!"), ("Repeat the password", "Secret-42!")):
        ann.answer(prompt, value)
    ann.option("Continue")
    ann.option("Fetch the code from the server's development outbox (stands in for the mailbox)")
    ann.option("Create account")
    add_info_and_phone(ann, "Ann", "17.05.1990", "+7 916 123-45-67")

    # Bob: an account made over the API, logged in through the demo.
    call("POST", "/v1/signup/code", {"email": "bob@example.com"})
    code = call("GET", "/dev/outbox?to=bob%40example.com&last=1")[0]["code"]
    call("POST", "/v1/signup", {"email": "bob@example.com", "code": code, "password": "Secret-42!", "firstName": "Bob",
                                "lastName": "Ray", "tag": "bob.ray", "locale": "en"})
    bob.start()
    bob.expect("== Log in ==")
    bob.option("Type login and password")
    bob.answer("Email or tag", "bob.ray")
    bob.answer("Password", "Secret-42!")
    bob.option("Log in")
    add_info_and_phone(bob, "Bob", "02.03.1988", "+79167654321")

    # The operator credits Ann.
    out = subprocess.run([args.gatehouse, "wallet", "credit", "--phone", "+79161234567", "--amount", "1000.00", "--reason", "card top-up"],
                         cwd=work, env=ENV, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "balance 1 000.00 RUB" in out.stdout, out.stdout

    # Bob tops up 300 ₽: the amount, the provider's page (the local one, whose button the demo presses), the balance.
    bob.option("Top up")
    bob.expect("== Top up ==")
    bob.refused("Pay")
    bob.option("Enter the amount")
    bob.answer("Amount, ₽", "300")
    bob.option("Pay")
    bob.expect("Waiting for the payment of 300.00 ₽…")
    bob.expect(f"Payment page: {BASE}/dev/payments/cs_local_")
    bob.option("Check")
    bob.expect("Waiting for the payment of 300.00 ₽…")
    bob.option("Pay on the local page (development)")
    bob.expect("✓ The wallet is topped up with 300.00 ₽. Balance: 300.00 ₽.")
    bob.option("Back")
    bob.expect("== Profile ==")
    bob.expect("Balance: 300.00 ₽")

    # Ann sends Bob 250,50 ₽: the name is shown before she confirms.
    ann.option("Refresh")
    ann.expect("Balance: 1\u202f000.00 ₽")
    ann.option("Payments")
    ann.expect("== Payments ==")
    ann.option("Send money")
    ann.expect("== Send money ==")
    ann.option("Fill in the form")
    ann.answer("To (phone, @tag or email)", "+7 916 765-43-21")
    ann.answer("Amount, ₽", "2000")
    ann.answer("Comment", "")
    ann.expect("Not enough money: the balance is 1\u202f000.00 ₽.")
    ann.option("Fill in the form")
    ann.answer("To (phone, @tag or email)", "")
    ann.answer("Amount, ₽", "250,50")
    ann.answer("Comment", "concert")
    ann.option("Continue")
    ann.expect("Send 250.50 ₽ to Bob Ray (@bob.ray)?")
    ann.option("Confirm")
    ann.expect("Sent 250.50 ₽ to Bob Ray. Balance: 749.50 ₽.")
    ann.option("Back")
    ann.expect("Bob Ray: You sent 250.50 ₽ · concert")

    # Bob sees it, and asks for 100 ₽ back as a loan in the dialog.
    bob.option("Payments")
    bob.expect("Ann Lee ●: Ann Lee sent you 250.50 ₽ · concert")
    bob.option("Open the dialog with Ann Lee")
    bob.expect("Balance: 550.50 ₽")
    bob.option("Request money")
    bob.expect("== Request money ==")
    bob.option("Kind: loan")
    bob.option("Fill in the form")
    bob.answer("From (phone, @tag or email)", "")
    bob.answer("Amount, ₽", "100")
    bob.answer("Comment", "till Friday")
    bob.option("Continue")
    bob.expect("Ask Ann Lee (@ann.lee) for 100.00 ₽ (loan)?")
    bob.option("Confirm")
    bob.expect("Asked Ann Lee for 100.00 ₽.")
    bob.option("Back")
    bob.expect("You asked Ann Lee for 100.00 ₽ (loan) · till Friday [waiting]")

    # Ann pays the request in the dialog.
    ann.option("Refresh")
    ann.expect("Bob Ray ●: Bob Ray asks you for 100.00 ₽ (loan) · till Friday")
    ann.option("Open the dialog with Bob Ray")
    ann.expect("Bob Ray asks you for 100.00 ₽ (loan) · till Friday [waiting]")
    ann.option("Pay: Bob Ray asks you for 100.00 ₽ (loan)")
    ann.expect("Bob Ray asks you for 100.00 ₽ (loan) · till Friday [paid]")
    ann.expect("You paid the request: 100.00 ₽")
    ann.expect("Paid 100.00 ₽. Balance: 649.50 ₽.")

    # Bob repays the loan with one action.
    bob.option("Refresh")
    bob.expect("[paid]")
    bob.expect("Ann Lee paid your request: 100.00 ₽")
    bob.option("Repay: You asked Ann Lee for 100.00 ₽ (loan)")
    bob.expect("[repaid]")
    bob.expect("You repaid the loan: 100.00 ₽")
    bob.expect("Repaid 100.00 ₽. Balance: 550.50 ₽.")

    ann.option("Refresh")
    ann.expect("Balance: 749.50 ₽")
    ann.expect("Bob Ray repaid the loan: 100.00 ₽")

    # Ann may not delete her account while her wallet holds money: the profile's "Delete account"
    # asks for the password and shows the server's reason, and "Cancel" goes back.
    ann.option("Back to dialogs")
    ann.option("Back to profile")
    ann.expect("== Profile ==")
    ann.option("Delete account")
    ann.expect("== Delete account ==")
    ann.option("Type the password")
    ann.answer("Current password: ", "Secret-42!")
    ann.option("Delete account")
    ann.expect("Your wallet holds 749.50 ₽: pay it out before deleting the account.")
    ann.option("Cancel")
    ann.expect("== Profile ==")

    # Both sides agree with the ledger.
    tokens = {}
    for who in ("ann", "bob"):
        with open(os.path.join(work, who, "session.json")) as f:
            tokens[who] = json.load(f)["token"]
    assert call("GET", "/v1/wallet", token=tokens["ann"])["balance"] == 74950
    assert call("GET", "/v1/wallet", token=tokens["bob"])["balance"] == 55050
    history = call("GET", "/v1/wallet/transactions", token=tokens["bob"])["items"]
    assert [t["kind"] for t in history][-1] == "topup" and history[-1]["amount"] == 30000, history
    requests = call("GET", "/v1/wallet/requests", token=tokens["ann"])["items"]
    assert [r["state"] for r in requests] == ["repaid"], requests
    audit = subprocess.run([args.gatehouse, "wallet", "audit"], cwd=work, env=ENV, capture_output=True, text=True, timeout=60)
    assert audit.stdout.strip() == "ledger ok", audit.stdout
    ann.quit()
    bob.quit()
    print("wallet demo session passed")
except Exception as error:  # noqa: BLE001 - the report shows what the terminals drew
    failed = error
finally:
    server.send_signal(signal.SIGTERM)
    try:
        server.wait(15)
    except subprocess.TimeoutExpired:
        server.kill()
if failed is not None:
    print(f"FAILED: {type(failed).__name__}: {failed}")
    for name, log in transcripts.items():
        print(f"--- {name}'s terminal (last 4000 characters) ---")
        print("".join(log)[-4000:])
    sys.exit(1)
