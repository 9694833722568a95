#!/usr/bin/env python3
"""`gatehouse operators create` at a terminal (a pseudo-terminal, through pexpect): it asks for the
password on standard error, twice, never echoing it; the same twice makes the operator, two that
differ make nothing. Exits 0 when each step went so."""
import argparse
import os
import sys

import pexpect

p = argparse.ArgumentParser()
p.add_argument("--gatehouse", required=True)
p.add_argument("--dir", required=True)
args = p.parse_args()
ENV = {k: v for k, v in os.environ.items() if not k.startswith("GATEHOUSE_") and k not in ("DATABASE_URL", "PUBLIC_URL")}
PASSWORD = "Typed-at-a-terminal-91"
step = "setup"
transcript = []


def spawn(name, role):
    child = pexpect.spawn(args.gatehouse, ["operators", "create", name, "--role", role], cwd=args.dir, env=ENV,
                          encoding="utf-8", timeout=60)
    child.logfile_read = type("Log", (), {"write": lambda self, s: transcript.append(s), "flush": lambda self: None})()
    return child


try:
    step = "the same password twice makes the operator"
    child = spawn("ann", "admin")
    child.expect_exact("Password for ann: ")
    child.sendline(PASSWORD)
    child.expect_exact("Repeat it: ")
    child.sendline(PASSWORD)
    child.expect_exact("operator ann (admin) made")
    child.expect_exact("otpauth://totp/")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.exitstatus

    step = "two passwords that differ make nothing"
    child = spawn("bob", "support")
    child.expect_exact("Password for bob: ")
    child.sendline(PASSWORD)
    child.expect_exact("Repeat it: ")
    child.sendline(PASSWORD + "x")
    child.expect_exact("the two passwords differ; nothing was made")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus not in (0, None), child.exitstatus

    step = "nothing typed was echoed"
    assert PASSWORD not in "".join(transcript), "the password was echoed"
    print("operators create at a terminal passed")
except (pexpect.ExceptionPexpect, AssertionError) as error:
    sys.stderr.write(f"failed at: {step}: {type(error).__name__}: {error}\n--- transcript ---\n{''.join(transcript)}\n")
    sys.exit(1)
