#!/usr/bin/env python3
"""Drives `gatehouse-demo sign-to-login`, `sign-pdf` and `open-pdf` through a pseudo-terminal:
registers with ten signatures read from point files (one writer's curve, a little different each
time), signs a generated PDF with an eleventh, opens it (no warning), changes one byte of it
outside the app and opens it again (the warning). Exits 0 when every expected line appeared."""
import argparse
import json
import math
import os
import random
import subprocess
import sys

import pexpect

import demo_menu
from demo_menu import option

p = argparse.ArgumentParser()
p.add_argument("--demo", required=True)
p.add_argument("--server", required=True)
p.add_argument("--apikey", required=True)
p.add_argument("--folder", required=True)
p.add_argument("--pdf", required=True)
args = p.parse_args()

common = ["--server", args.server, "--apikey", args.apikey, "--language", "en",
          "--documents", os.path.join(args.folder, "docs"), "--state-file", os.path.join(args.folder, "state.json")]
rng = random.Random(5)


def point_file(index):
    count = 110 + rng.randrange(20)
    scale = 0.95 + rng.random() * 0.1
    # a hand's shape differs a little each time (the server refuses a copy of points it has seen)
    a, b = 1 + (rng.random() - 0.5) * 0.08, 1 + (rng.random() - 0.5) * 0.08
    p, q = (rng.random() - 0.5) * 0.12, (rng.random() - 0.5) * 0.12
    points = []
    for i in range(count):
        t = i / count * 2 * math.pi
        x = 60 * a * math.cos(t + p) + 25 * math.sin(2.3 * t) + 20 * t
        y = 40 * b * math.sin(1.7 * t + q) + 10 * math.cos(4 * t)
        points.append([200 + scale * x + rng.random() - 0.5, 150 + scale * y + rng.random() - 0.5])
    path = os.path.join(args.folder, "signature-%d.json" % index)
    with open(path, "w") as f:
        json.dump(points, f)
    return path


def spawn(arguments):
    return demo_menu.spawn(args.demo, arguments)


def run():
    files = [point_file(i) for i in range(11)]
    demo = spawn(["sign-to-login"] + common)
    demo_menu.fill_profile(demo, "ann@example.com", "Ann Lee")
    for path in files[:10]:
        option(demo, "Draw from a point file")
        demo.expect_exact("Point file: "); demo.sendline(path)
        option(demo, "Accept")
    demo_menu.prove_address(demo)
    demo.expect_exact("== Documents ==")
    demo.expect_exact("> "); demo.sendline("q")
    demo.expect(pexpect.EOF)

    signed = os.path.join(args.folder, "Contract-signed.pdf")
    demo = spawn(["sign-pdf", args.pdf, "--page", "1", "--rect", "300,650,200,80", "--signature", files[10], "--out", signed] + common)
    demo.expect_exact("Signed and saved as Contract-signed.pdf.")
    demo.expect(r"Match: \d+%")
    demo.expect(r"History: http://[^\s]+/documents/\?documentid=([0-9a-f]{20})")
    document_id = demo.match.group(1)
    demo.expect(pexpect.EOF)
    check = subprocess.run(["qpdf", "--check", signed], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    with open(args.pdf, "rb") as a, open(signed, "rb") as b:
        assert b.read().startswith(a.read()), "the original is not a prefix of the signed file"

    demo = spawn(["open-pdf", signed] + common)
    demo.expect_exact("documentid: " + document_id)
    demo.expect(r"✎ Ann Lee  \d+%")
    demo.expect_exact("Unchanged since its last signing.")
    demo.expect(pexpect.EOF)

    with open(signed, "rb") as f:
        data = f.read()
    assert data.count(b"(Contract)") == 1
    with open(signed, "wb") as f:
        f.write(data.replace(b"(Contract)", b"(Contracu)"))          # one byte, outside the app
    demo = spawn(["open-pdf", signed] + common)
    demo.expect_exact("documentid: " + document_id)
    demo.expect_exact("⚠ Warning: this document has been changed outside Sign To Login since it was last signed.")
    demo.expect(pexpect.EOF)

    # A refusal (here: a file that is not a PDF) is said as an error, exit 1, without the usage text of a wrong option.
    not_pdf = os.path.join(args.folder, "notes.pdf")
    with open(not_pdf, "w") as f:
        f.write("not a PDF at all")
    demo = spawn(["sign-pdf", not_pdf, "--page", "1", "--rect", "300,650,200,80", "--signature", files[10]] + common)
    demo.expect(pexpect.EOF)
    said = demo.before
    demo.close()
    assert demo.exitstatus == 1 and said.lstrip().startswith("Error: ") and "USAGE" not in said, (demo.exitstatus, said)


try:
    run()
    print("sign-pdf demo session passed")
except (pexpect.ExceptionPexpect, AssertionError) as error:
    sys.stderr.write("demo session failed: %s %s\n--- transcript ---\n%s\n" % (type(error).__name__, error, demo_menu.transcript()))
    sys.exit(1)
