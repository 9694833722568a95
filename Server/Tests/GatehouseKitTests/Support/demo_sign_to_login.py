#!/usr/bin/env python3
"""Drives `gatehouse-demo sign-to-login` through a pseudo-terminal as a person would, against a
running server: registers with ten signatures (one scribble refused by the pad first), opens a
PDF handed over from elsewhere, signs it, moves the signature, saves it, reads the history; then a
relaunch goes straight to the documents (the person remembered), a stranger's signature on the
document is refused at the save (below the signing floor), her own drawn in a hurry is saved with a
low-match warning for the next reader, and the stl:// link opens the history; logged out, it logs in again by email and signature (a stranger's refused). The photo taken
when signing goes with the signature into the history; "Send by email" writes the whole message as
an .eml file, which Python's email package reads back: its attachment is the signed PDF, byte for
byte. Exits 0 when every expected screen appeared."""
import argparse
import email
import email.policy
import os
import sys
import tempfile

import pexpect
from PIL import Image

import demo_menu
from demo_menu import option

p = argparse.ArgumentParser()
p.add_argument("--demo", required=True)
p.add_argument("--server", required=True)
p.add_argument("--apikey", required=True)
p.add_argument("--documents", required=True)
p.add_argument("--state-file", required=True)
p.add_argument("--pdf", required=True)
args = p.parse_args()



def spawn():
    return demo_menu.spawn(args.demo, ["sign-to-login", "--server", args.server, "--apikey", args.apikey, "--language", "en",
                                       "--documents", args.documents, "--state-file", args.state_file])


def run():
    demo = spawn()
    demo.expect_exact("== Sign To Login ==")
    picture = os.path.join(tempfile.mkdtemp(prefix="stl-profile-"), "ann.png")
    Image.new("RGB", (32, 32), (90, 120, 200)).save(picture, "PNG")
    demo_menu.fill_profile(demo, "ann@example.com", "Ann Lee", photo=picture)
    demo.expect_exact("Signature 1 of 10")
    option(demo, "Draw a short scribble")
    demo.expect(r"(\d+)\) Clear\r?\n")
    clear = demo.match.group(1)
    demo.expect(r"\d+\) Accept \(unavailable\)")               # the pad refuses a scribble
    demo.expect_exact("> ")
    demo.sendline(clear)
    for n in range(10):
        option(demo, "Draw my signature")
        demo.expect_exact("#")                                  # the ink, drawn as characters
        option(demo, "Accept")
    demo_menu.prove_address(demo)
    demo.expect_exact("== Documents ==")
    demo.expect_exact("┌ Signature sample created")              # the spec's alert, until its button
    option(demo, "OK")
    demo.expect_exact("== Documents ==")
    demo.expect_exact("No documents yet")
    option(demo, "Open a PDF from elsewhere (a path)")
    demo.expect_exact("Path: "); demo.sendline(args.pdf)
    demo.expect_exact("== Contract ==")
    demo.expect_exact("Page 1: 595×842 pt")
    demo.expect(r"File: (\S+)/Contract\.pdf")
    saved_in = demo.match.group(1)
    # The photo taken when signing (the app's camera; here a file): the evidence of who signed.
    photo = os.path.join(tempfile.mkdtemp(prefix="stl-photo-"), "face.jpg")
    Image.new("RGB", (48, 64), (200, 160, 140)).save(photo, "JPEG")
    option(demo, "Attach a photo taken when signing (a path)")
    demo.expect_exact("Path: "); demo.sendline(photo)
    option(demo, "Sign")
    demo.expect_exact("== Sign to continue ==")
    option(demo, "Draw my signature")
    option(demo, "Sign")
    demo.expect(r"Signature on page 1 at x \d+, y \d+, \d+×\d+ \((\d+)%\)")
    option(demo, "Move the signature (dx dy, points)")
    demo.expect_exact("dx dy: "); demo.sendline("-100 -50")
    option(demo, "Save")
    demo.expect(r"documentid: ([0-9a-f]{20})")
    document_id = demo.match.group(1)
    demo.expect(r"✎ Ann Lee  \d+%[^\r\n]*📷")
    demo.expect_exact("Signed and saved as Contract.pdf.")
    with open(os.path.join(saved_in, "Contract.pdf"), "rb") as f:
        assert f.read().startswith(b"%PDF") and os.path.getsize(os.path.join(saved_in, "Contract.pdf")) > os.path.getsize(args.pdf), "the signed file is where the demo said"
    option(demo, "Send by email")
    demo.expect(r"✉ written to (\S+\.eml)")
    with open(demo.match.group(1), "rb") as f:
        message = email.message_from_bytes(f.read(), policy=email.policy.default)
    assert message["Subject"] == "Signed document: Contract", message["Subject"]
    assert message["From"] == "ann@example.com" and message["Date"] and message["Message-ID"], dict(message)
    assert "/documents/?documentid=" + document_id in message.get_body(preferencelist=("plain",)).get_content()
    attachments = [part for part in message.iter_attachments()]
    assert len(attachments) == 1 and attachments[0].get_content_type() == "application/pdf", attachments
    assert attachments[0].get_filename() == "Contract.pdf", attachments[0].get_filename()
    with open(os.path.join(args.documents, "Contract.pdf"), "rb") as f:
        assert attachments[0].get_payload(decode=True) == f.read(), "the mailed PDF is not the signed one"
    option(demo, "History")
    demo.expect_exact("== Signing history ==")
    demo.expect(r"✎ Ann Lee  \d+%[^\r\n]*📷")
    demo.expect_exact("/documents/?documentid=" + document_id)
    option(demo, "Back to the documents")
    demo.expect_exact("== Documents ==")
    demo.expect_exact("Contract.pdf")
    demo.expect_exact("> "); demo.sendline("q")
    demo.expect(pexpect.EOF)
    demo.close()

    # Relaunch: remembered, straight to the documents. A stranger's signature is placed but never
    # recorded (below the signing floor); hers drawn in a hurry is: a low match, warned of.
    demo = spawn()
    demo.expect_exact("== Documents ==")
    option(demo, "Open Contract.pdf")
    demo.expect_exact("== Contract ==")
    demo.expect_exact("documentid: " + document_id)
    option(demo, "Sign")
    option(demo, "Draw someone else's signature")
    option(demo, "Sign")
    demo.expect(r"Signature on page 1 at")
    option(demo, "Save")
    demo.expect_exact("is not a signature of this user")
    option(demo, "Delete signature")
    # A hurried hand scores differently each time: she draws until the match is a low one (between
    # the server's signing floor, 30%, and its threshold, 50%), as a person who is told "Match: 55%"
    # has simply signed.
    for _ in range(8):
        option(demo, "Sign")
        option(demo, "Draw my signature in a hurry")
        option(demo, "Sign")
        demo.expect(r"Signature on page 1 at [^\r\n]*\((\d+)%\)")
        if 30 <= int(demo.match.group(1)) < 50:
            break
        option(demo, "Delete signature")
    else:
        raise AssertionError("no hurried signature scored between 30% and 50%")
    option(demo, "Save")
    demo.expect(r"✎ Ann Lee  \d+%  [^\r\n]*\r?\n\s*✎ Ann Lee  (\d+)% ⚠")
    assert 30 <= int(demo.match.group(1)) < 50, demo.match.group(0)
    demo.expect_exact("Warning: the signature of Ann Lee matched poorly.")
    demo.expect_exact("Signed and saved as Contract.pdf.")
    option(demo, "Back to the documents")
    option(demo, "Open a link (stl://…)")
    demo.expect_exact("Link: "); demo.sendline("stl://user/?documentid=" + document_id)
    demo.expect_exact("== Signing history ==")
    demo.expect(r"✎ Ann Lee  \d+%  ")
    demo.expect(r"✎ Ann Lee  \d+% ⚠")

    # Log out, and in again by email and signature: a stranger's is refused, hers goes in.
    option(demo, "Back to the documents")
    option(demo, "Log out")
    demo.expect_exact("== Sign To Login ==")
    option(demo, "Log in")
    demo.expect_exact("== Log in ==")
    option(demo, "Type the email")
    demo.expect_exact("Email: "); demo.sendline("ann@example.com")
    option(demo, "Continue")
    demo.expect_exact("== Sign to continue ==")
    option(demo, "Draw someone else's signature")
    option(demo, "Sign")
    demo.expect(r"Match: \d+%\. That does not look like your signature")
    option(demo, "Draw my signature")
    option(demo, "Sign")
    demo.expect_exact("== Documents ==")
    demo.expect_exact("Contract.pdf")
    demo.expect_exact("> "); demo.sendline("q")
    demo.expect(pexpect.EOF)
    demo.close()


try:
    run()
    print("sign-to-login demo session passed")
except pexpect.ExceptionPexpect as error:
    sys.stderr.write("demo session failed: %s\n--- transcript ---\n%s\n" % (type(error).__name__, demo_menu.transcript()))
    sys.exit(1)
