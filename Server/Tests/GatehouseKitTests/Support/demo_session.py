#!/usr/bin/env python3
"""Drives gatehouse-demo through a pseudo-terminal as a person would: registers a new
account (code from the development outbox, standing in for SMS autofill), confirms the
email, logs out, and logs in again. Exits 0 when every expected screen appeared."""
import argparse
import os
import re
import sys

import pexpect

p = argparse.ArgumentParser()
p.add_argument("--demo", required=True)
p.add_argument("--server", required=True)
p.add_argument("--session-file", required=True)
p.add_argument("--phone", default="+7 912 345-67-89")
p.add_argument("--scenario", default="phone-accounts", choices=["phone-accounts", "messenger-auth", "two-people", "providers"])
p.add_argument("--key-file", help="providers: the stand-in provider's signing key (PEM), its kid key-1")
p.add_argument("--client", help="providers: the Apple client id the server takes")
p.add_argument("--home", help="two-people: the HOME whose platform stores the demos use")
args = p.parse_args()


def spawn_messenger_auth(columns):
    """`gatehouse-demo messenger-auth` in English on a pseudo-terminal: the process, what it printed so far, and a
    function that answers the menu's prompt with a number."""
    # 60 s a step: in CI this runs beside seven other tests on two cores, where one step once
    # took more than 20 s (the logout, at 57 s into the session) and the session failed on time alone.
    demo = pexpect.spawn(args.demo, ["messenger-auth", "--server", args.server, "--language", "en",
                                     "--session-file", args.session_file],
                         encoding="utf-8", timeout=60, dimensions=(50, columns))
    log = []
    demo.logfile_read = type("Log", (), {"write": lambda self, s: log.append(s), "flush": lambda self: None})()

    def choose(number):
        demo.expect_exact("> ")
        demo.sendline(number)

    return demo, log, choose


def messenger_auth():
    """gatehouse-demo messenger-auth: registers with an email code (read from the development
    outbox, standing in for the mailbox), logs out through the confirmation, logs in by tag."""
    password = "Secret-42!"
    demo, log, choose = spawn_messenger_auth(columns=160)

    try:
        demo.expect_exact("== Log in ==")
        demo.expect(r"2\) Log in \(unavailable\)")            # nothing typed yet
        demo.expect(r"4\) Register")
        choose("4")
        demo.expect_exact("== Registration ==")
        demo.expect(r"3\) Continue \(unavailable\)")
        choose("1")                                             # fill in the form
        demo.expect_exact("Email: "); demo.sendline("ivan@example.com")
        demo.expect_exact("Last name: "); demo.sendline("Petrov")
        demo.expect_exact("First name: "); demo.sendline("Ivan")
        demo.expect_exact("Tag: "); demo.sendline("Ivan")
        demo.expect_exact("Password: "); demo.sendline(password)
        demo.expect_exact("Repeat the password: "); demo.sendline(password)
        demo.expect_exact("== Registration ==")
        demo.expect_exact("@ivan is free")                      # checked with the server
        demo.expect_exact("Password: **********")               # masked when drawn again
        demo.expect(r"3\) Continue\r?\n")
        choose("3")
        demo.expect_exact("Enter the code we sent to ivan@example.com")
        demo.expect_exact("The code is valid for")
        demo.expect(r"Send again in \d:\d\d \(unavailable\)")
        choose("2")                                             # fetch the code from the dev outbox
        demo.expect(r"Code from the email: (\d{6})")
        choose("3")                                             # Create account
        demo.expect_exact("== Profile ==")
        demo.expect_exact("Name: Ivan Petrov")
        demo.expect_exact("Tag: @ivan")
        demo.expect_exact("Email: ivan@example.com")
        demo.expect(r"2\) Log out")
        choose("2")
        demo.expect_exact("== Log out? ==")                     # asked again before logging out
        demo.expect(r"2\) Cancel")
        choose("1")
        demo.expect_exact("== Log in ==")
        choose("1")
        demo.expect_exact("Email or tag: "); demo.sendline("@ivan")
        demo.expect_exact("Password: "); demo.sendline(password)
        demo.expect(r"2\) Log in\r?\n")
        choose("2")
        demo.expect_exact("== Profile ==")
        demo.expect_exact("Tag: @ivan")
        choose("q")
        demo.expect(pexpect.EOF)
        demo.close()
    except pexpect.ExceptionPexpect as error:
        sys.stderr.write("demo session failed: %s\n--- transcript ---\n%s\n" % (type(error).__name__, "".join(log)[-4000:]))
        return 1
    if password in "".join(log):
        sys.stderr.write("the password was echoed in clear\n")
        return 1
    if demo.exitstatus != 0:
        sys.stderr.write("demo exited with %s\n" % demo.exitstatus)
        return 1
    print("messenger-auth demo session passed")
    return 0


def providers():
    """gatehouse-demo messenger-auth against a server that takes Apple and Google: the login screen offers both; choosing
    Apple says what the sheet is opened with (the nonce's SHA-256) and takes the identity token it gave, here signed by
    PyJWT with the stand-in provider's key, as Apple signs one; the new account, which has no tag, is asked for one
    (the messenger's people find each other by it), and then signed in."""
    import time
    import uuid
    import jwt   # PyJWT
    demo, log, choose = spawn_messenger_auth(columns=200)   # the sheet's line carries a 64-character nonce

    try:
        demo.expect_exact("== Log in ==")
        demo.expect(r"3\) Continue with Apple")
        demo.expect(r"4\) Continue with Google")
        demo.expect(r"6\) Register")
        choose("3")
        demo.expect(r"The sheet is opened with the nonce ([0-9a-f]{64}) for ([^:\s]+): paste the identity token it gave")
        nonce_hash, client = demo.match.group(1), demo.match.group(2)
        if client != args.client:
            raise pexpect.ExceptionPexpect("the sheet's client id: %s" % client)
        now = int(time.time())
        token = jwt.encode({"iss": "https://appleid.apple.com", "aud": client, "sub": "demo.apple.1", "iat": now, "exp": now + 600,
                            "nonce": nonce_hash, "email": "demo@example.com", "email_verified": "true", "is_private_email": "false",
                            "jti": str(uuid.uuid4())},
                           open(args.key_file).read(), algorithm="RS256", headers={"kid": "key-1"})
        demo.expect_exact("Identity token: ")
        demo.sendline(token)
        demo.expect_exact("== Choose your tag ==")
        demo.expect_exact("People find you in the messenger by your tag. Choose one to go on.")
        demo.expect(r"2\) Continue \(unavailable\)")
        choose("1")
        demo.expect_exact("Tag: ")
        demo.sendline("Demo.Apple")
        demo.expect_exact("@demo.apple is free")
        demo.expect(r"2\) Continue\r?\n")
        choose("2")
        demo.expect_exact("== Profile ==")
        demo.expect_exact("Tag: @demo.apple")
        demo.expect_exact("Email: demo@example.com")
        choose("q")
        demo.expect(pexpect.EOF)
        demo.close()
    except pexpect.ExceptionPexpect as error:
        sys.stderr.write("demo session failed: %s\n--- transcript ---\n%s\n" % (error, "".join(log)[-4000:]))
        return 1
    print("providers demo session passed")
    return 0


def two_people():
    """gatehouse-demo messenger-auth --as NAME, without --session-file: Ann registers in one terminal;
    Bob's terminal opens on a login of its own (not signed in as Ann, as a shared store would);
    Ann's opens on her profile again."""
    env = dict(os.environ, HOME=args.home, XDG_DATA_HOME=os.path.join(args.home, ".local", "share"))
    log = []

    def terminal(name):
        demo = pexpect.spawn(args.demo, ["messenger-auth", "--server", args.server, "--language", "en", "--as", name],
                             env=env, encoding="utf-8", timeout=60, dimensions=(50, 160))
        demo.logfile_read = type("Log", (), {"write": lambda self, s: log.append(s), "flush": lambda self: None})()
        return demo

    def choose(demo, number):
        demo.expect_exact("> ")
        demo.sendline(number)

    try:
        ann = terminal("ann")
        ann.expect_exact("== Log in ==")
        ann.expect(r"4\) Register")
        choose(ann, "4")
        choose(ann, "1")
        for prompt, value in [("Email: ", "ann@example.com"), ("Last name: ", "Lee"), ("First name: ", "Ann"), ("Tag: ", "ann"),
                              ("Password: ", "Secret-42!"), ("Repeat the password: ", "Secret-42!")]:
            ann.expect_exact(prompt)
            ann.sendline(value)
        ann.expect(r"3\) Continue\r?\n")
        choose(ann, "3")
        choose(ann, "2")
        ann.expect(r"Code from the email: (\d{6})")
        choose(ann, "3")
        ann.expect_exact("== Profile ==")
        choose(ann, "q")
        ann.expect(pexpect.EOF)
        bob = terminal("bob")
        bob.expect_exact("== Log in ==")
        choose(bob, "q")
        bob.expect(pexpect.EOF)
        again = terminal("ann")
        again.expect_exact("== Profile ==")
        again.expect_exact("Tag: @ann")
        choose(again, "q")
        again.expect(pexpect.EOF)
    except pexpect.ExceptionPexpect as error:
        sys.stderr.write("demo session failed: %s\n--- transcript ---\n%s\n" % (type(error).__name__, "".join(log)[-4000:]))
        return 1
    print("two-people demo session passed")
    return 0


if args.scenario == "messenger-auth":
    sys.exit(messenger_auth())
if args.scenario == "two-people":
    sys.exit(two_people())
if args.scenario == "providers":
    sys.exit(providers())

PASSWORD = "Secret-42!"
child = pexpect.spawn(args.demo, ["phone-accounts", "--server", args.server, "--language", "en",
                                  "--session-file", args.session_file],
                      encoding="utf-8", timeout=60, dimensions=(50, 160))
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
    step(r"4\) Send code \(unavailable\)", "4")          # disabled before the form is filled...
    child.expect_exact("Phone number (your login): Required")   # ...and it says why
    child.expect_exact("> "); child.sendline("1")
    child.expect_exact("Phone number (your login): "); child.sendline(args.phone)
    child.expect_exact("Password: "); child.sendline(PASSWORD)
    child.expect_exact("Last name: "); child.sendline("Petrov")
    child.expect_exact("First name: "); child.sendline("Ivan")
    child.expect_exact("Email (optional): "); child.sendline("ivan@example.com")
    child.expect_exact("Password: **********")           # masked when the form is drawn again
    step(r"4\) Send code \(unavailable\)", "4")          # still disabled: the terms box
    child.expect_exact("Tick the terms box first.")
    # Filling the form again shows every value and keeps it on Enter: only the first name changes.
    child.expect_exact("> "); child.sendline("1")
    child.expect_exact("Phone number (your login) [%s]: " % args.phone); child.sendline("")
    child.expect_exact("Password [**********]: "); child.sendline("")
    child.expect_exact("Last name [Petrov]: "); child.sendline("")
    child.expect_exact("First name [Ivan]: "); child.sendline("John")
    child.expect_exact("Email (optional) [ivan@example.com]: "); child.sendline("")
    child.expect_exact("First name: John")
    child.expect_exact("Email (optional): ivan@example.com")
    child.expect_exact("> "); child.sendline("2")         # tick the terms
    child.expect_exact("[x] I accept the terms and conditions")
    child.expect_exact("> "); child.sendline("3")         # the terms can be read
    child.expect_exact("Gatehouse keeps your phone number")
    step(r"4\) Send code\r?\n", "4")
    child.expect_exact("== Confirmation code ==")
    child.expect(r"Send again in \d:\d\d \(unavailable\)")
    child.expect_exact("> "); child.sendline("2")         # fetch the code from the dev outbox
    child.expect(r"Code from the SMS: (\d{6})")
    child.expect_exact("> "); child.sendline("3")         # Confirm
    child.expect_exact("== Confirm your email ==")
    child.expect_exact("We sent a confirmation link to ivan@example.com")
    child.expect_exact("> "); child.sendline("4")         # open the link from the dev outbox
    child.expect_exact("Link opened and its button pressed.")
    child.expect_exact("== Your account ==")              # no stale "not confirmed yet": the screen moved on
    child.expect_exact("Name: John Petrov")
    child.expect_exact("Phone: +79123456789")
    child.expect_exact("✓ Email confirmed")
    # Change the confirmed email: the server asks for the password, the prompt shows a field for it.
    child.expect_exact("> "); child.sendline("2")
    child.expect_exact("== Change email ==")
    child.expect_exact("> "); child.sendline("1")
    child.expect_exact("name@example.com [ivan@example.com]: "); child.sendline("ivan.new@example.com")
    child.expect_exact("> "); child.sendline("2")         # Save
    child.expect_exact("Enter your current password to make this change.")
    child.expect_exact("> "); child.sendline("2")         # the password field
    child.expect_exact("Current password: "); child.sendline(PASSWORD)
    child.expect_exact("> "); child.sendline("3")         # Save
    child.expect_exact("== Confirm your email ==")
    child.expect_exact("ivan.new@example.com")
    child.expect_exact("> "); child.sendline("5")         # Log out
    child.expect_exact("== Welcome ==")
    step(r"2\) Log in", "2")
    child.expect_exact("== Log in ==")
    child.expect_exact("> "); child.sendline("1")
    child.expect_exact("Phone, login or email: "); child.sendline("8 912 345 67 89")
    child.expect_exact("Password: "); child.sendline("")
    child.expect_exact("> "); child.sendline("3")         # Forgot password? carries the phone along
    child.expect_exact("== Restore password ==")
    child.expect_exact("By SMS · Phone number: 8 912 345 67 89")
    child.expect_exact("> "); child.sendline("4")         # the outbox helper, before anything was sent
    child.expect_exact("Send the new password first.")
    child.expect_exact("> "); child.sendline("3")         # Send a new password
    child.expect_exact("A new password was sent by SMS")
    child.expect_exact("> "); child.sendline("4")
    child.expect(r"New password: ([A-Za-z0-9][A-Za-z0-9!*._~-]{10}[A-Za-z0-9])")
    child.expect_exact("> "); child.sendline("5")         # Back to login, the phone still there
    child.expect_exact("== Log in ==")
    child.expect_exact("Phone, login or email: 8 912 345 67 89")
    child.expect_exact("> "); child.sendline("1")
    child.expect_exact("Phone, login or email [8 912 345 67 89]: "); child.sendline("")
    child.expect_exact("Password: "); child.sendline(PASSWORD)   # the old password works until the new one is used
    child.expect_exact("> "); child.sendline("2")         # Log in
    child.expect_exact("== Confirm your email ==")        # the new address is still pending
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
