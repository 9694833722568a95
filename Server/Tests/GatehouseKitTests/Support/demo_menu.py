"""What the Sign To Login demo scripts share: a demo process in a pseudo-terminal whose output is
kept for the failure report, choosing a menu line by its label, and the registration form."""
import os
import re
import tempfile

import pexpect

log = []


def spawn(demo, arguments, cwd=None):
    """The demo in a pseudo-terminal; `cwd` is where it writes what it saves (an .eml), a scratch folder by default."""
    process = pexpect.spawn(demo, arguments, encoding="utf-8", timeout=30, dimensions=(60, 160),
                            cwd=cwd or tempfile.mkdtemp(prefix="demo-cwd-"))
    process.logfile_read = type("Log", (), {"write": lambda self, s: log.append(s), "flush": lambda self: None})()
    return process


def option(demo, label):
    """Waits for the menu line with `label` and its prompt, and chooses it."""
    demo.expect(r"(\d+)\) " + re.escape(label) + r"\r?\n")
    number = demo.match.group(1)
    demo.expect_exact("> ")
    demo.sendline(number)


def fill_profile(demo, email, name, photo=None):
    """On the start screen: Register, the form with the two required fields (and the optional
    profile picture, an image file's path), Next."""
    option(demo, "Register")
    demo.expect_exact("== Your profile ==")
    option(demo, "Fill in the form")
    demo.expect_exact("Email: "); demo.sendline(email)
    demo.expect_exact("Name: "); demo.sendline(name)
    for _ in range(5):
        demo.expect(r"\(optional\): "); demo.sendline("")
    if photo:
        option(demo, "Pick a profile picture (an image file)")
        demo.expect_exact("Image file: "); demo.sendline(photo)
        demo.expect_exact("%d bytes picked" % os.path.getsize(photo))
    option(demo, "Next")
    demo.expect_exact("== Your signature ==")


def prove_address(demo):
    """Every Sign To Login enrolment proves the address: after the signatures, the code the mail
    carried (read from the server's development outbox), then Send."""
    option(demo, "Fetch the code from the server's development outbox (stands in for the mailbox)")
    option(demo, "Send")


def transcript():
    return "".join(log)[-5000:]
