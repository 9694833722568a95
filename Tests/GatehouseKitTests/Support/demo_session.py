#!/usr/bin/env python3
"""Drives gatehouse-demo through a pseudo-terminal as a person would: registers a new
account (code from the development outbox, standing in for SMS autofill), confirms the
email, logs out, and logs in again. Exits 0 when every expected screen appeared."""
import argparse
import re
import sys

import pexpect

p = argparse.ArgumentParser()
p.add_argument("--demo", required=True)
p.add_argument("--server", required=True)
p.add_argument("--session-file", required=True)
p.add_argument("--phone", default="+7 912 345-67-89")
args = p.parse_args()

PASSWORD = "Secret-42!"
child = pexpect.spawn(args.demo, ["phone-accounts", "--server", args.server, "--language", "en",
                                  "--session-file", args.session_file],
                      encoding="utf-8", timeout=20, dimensions=(50, 160))
transcript = []
child.logfile_read = type("Log", (), {"write": lambda self, s: transcript.append(s), "flush": lambda self: None})()


def step(expect, send=None):
    child.expect(expect)
    if send is not None:
        child.expect_exact("> ") if expect != "> " else None
        child.sendline(send)


try:
    child.expect_exact("== Welcome ==")
    step(r"1\) Register", "1")
    child.expect_exact("== Registration ==")
    step(r"Send code \(unavailable\)", "1")          # disabled before the form is filled
    child.expect_exact("Phone number (your login): "); child.sendline(args.phone)
    child.expect_exact("Password: "); child.sendline(PASSWORD)
    child.expect_exact("Last name: "); child.sendline("Petrov")
    child.expect_exact("First name: "); child.sendline("Ivan")
    child.expect_exact("Email: "); child.sendline("ivan@example.com")
    child.expect_exact("Password: **********")           # masked when the form is drawn again
    step(r"Send code \(unavailable\)", "2")          # still disabled: the terms box
    child.expect_exact("[x] I accept the terms and conditions")
    step(r"3\) Send code\r?\n", "3")
    child.expect_exact("== Confirmation code ==")
    child.expect(r"Send again in \d:\d\d \(unavailable\)")
    child.expect_exact("> "); child.sendline("2")         # fetch the code from the dev outbox
    child.expect(r"Code from the SMS: (\d{6})")
    child.expect_exact("> "); child.sendline("3")         # Confirm
    child.expect_exact("== Confirm your email ==")
    child.expect_exact("We sent a confirmation link to ivan@example.com")
    child.expect_exact("> "); child.sendline("4")         # open the link from the dev outbox
    child.expect_exact("Link opened.")
    child.expect_exact("> "); child.sendline("1")         # I have confirmed it
    child.expect_exact("== Your account ==")
    child.expect_exact("Phone: +79123456789")
    child.expect_exact("✓ Email confirmed")
    child.expect_exact("> "); child.sendline("2")         # Log out
    child.expect_exact("== Welcome ==")
    step(r"2\) Log in", "2")
    child.expect_exact("== Log in ==")
    child.expect_exact("> "); child.sendline("1")
    child.expect_exact("Phone, login or email: "); child.sendline("8 912 345 67 89")
    child.expect_exact("Password: "); child.sendline(PASSWORD)
    child.expect_exact("> "); child.sendline("2")         # Log in
    child.expect_exact("== Your account ==")
    child.expect_exact("✓ Email confirmed")
    child.expect_exact("> "); child.sendline("q")
    child.expect(pexpect.EOF)
    child.close()
except pexpect.ExceptionPexpect as error:
    sys.stderr.write("demo session failed: %s\n--- transcript ---\n%s\n" % (type(error).__name__, "".join(transcript)[-4000:]))
    sys.exit(1)

text = "".join(transcript)
if PASSWORD in text:
    sys.stderr.write("the password was echoed in clear\n")
    sys.exit(1)
if child.exitstatus != 0:
    sys.stderr.write("demo exited with %s\n" % child.exitstatus)
    sys.exit(1)
print("demo session passed")
