#!/usr/bin/env python3
"""Real SMTP server for Gatehouse's SMTP client tests (aiosmtpd based).

Usage:
  smtp_test_server.py gen-certs --out DIR
      Writes a throw-away test CA (ca.pem, ca.key) and a server certificate for
      localhost / 127.0.0.1 signed by it (server.pem, server.key) into DIR, using
      the `openssl` command line tool. Prints "CERTS <DIR>".

  smtp_test_server.py serve --dir DIR [--mode plain|starttls|tls] [--port N]
                            [--cert PEM --key PEM]
                            [--auth-user USER --auth-pass PASS]
                            [--auth-exclude PLAIN|LOGIN]
                            [--fail-mode MODE] [--reject-fraction F]
                            [--exit-on-stdin-eof]
      Listens on 127.0.0.1 on --port (default 0: a free port chosen by the OS), prints
      "READY <port>" on stdout and runs until killed.

      Every accepted message is written into DIR as
        msg-<n>.eml   raw message bytes as received (after dot-unstuffing)
        msg-<n>.json  {"mail_from", "rcpt_tos", "auth_user", "tls", "file"}
      The .json is written last (atomically), so its presence means complete.
      Every AUTH attempt is appended to DIR/auth.log as
        "<mechanism> <login> ok|fail"   (the password is never written).

      --fail-mode:
        none          (default) behave normally
        rcpt-451      reject RCPT TO with 451 (transient)
        rcpt-550      reject RCPT TO with 550 (permanent)
        mail-451      reject MAIL FROM with 451
        data-554      reject the message after end of data with 554
        drop-on-rcpt  drop the TCP connection when RCPT TO arrives
        drop-on-data  drop the TCP connection after the message data arrives
        hang-on-data  never answer the end of data (client timeout tests)
      --reject-fraction F  reject RCPT with 451 with probability F (0..1).
"""

import argparse
import asyncio
import itertools
import json
import os
import random
import signal
import ssl
import subprocess
import sys
import threading

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


def gen_certs(out):
    os.makedirs(out, exist_ok=True)

    def run(*args):
        subprocess.run(["openssl", *args], check=True, cwd=out,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    run("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "30",
        "-subj", "/CN=Gatehouse Test CA",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    run("req", *ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost")
    with open(os.path.join(out, "server.ext"), "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n"
                "basicConstraints=CA:FALSE\n"
                "keyUsage=critical,digitalSignature,keyEncipherment\n"
                "extendedKeyUsage=serverAuth\n")
    run("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-CAcreateserial", "-out", "server.pem", "-days", "30", "-extfile", "server.ext")
    print(f"CERTS {out}", flush=True)


class RecordingHandler:
    def __init__(self, directory, fail_mode, reject_fraction):
        self.directory = directory
        self.fail_mode = fail_mode
        self.reject_fraction = reject_fraction
        self.counter = itertools.count(1)
        self.lock = threading.Lock()
        self.random = random.Random(1234)

    async def handle_MAIL(self, server, session, envelope, address, mail_options):
        if self.fail_mode == "mail-451":
            return "451 4.3.0 Test server: MAIL temporarily rejected"
        envelope.mail_from = address
        envelope.mail_options.extend(mail_options)
        return "250 OK"

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if self.fail_mode == "rcpt-451":
            return "451 4.3.0 Test server: mailbox temporarily unavailable"
        if self.fail_mode == "rcpt-550":
            return "550 5.1.1 Test server: no such user"
        if self.fail_mode == "drop-on-rcpt":
            server.transport.abort()
            return "421 closing"
        if self.reject_fraction > 0 and self.random.random() < self.reject_fraction:
            return "451 4.3.0 Test server: random rejection"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        if self.fail_mode == "drop-on-data":
            server.transport.abort()
            return "421 closing"
        if self.fail_mode == "hang-on-data":
            await asyncio.sleep(3600)
        if self.fail_mode == "data-554":
            return "554 5.6.0 Test server: message rejected"
        with self.lock:
            n = next(self.counter)
        base = os.path.join(self.directory, f"msg-{n:04d}")
        with open(base + ".eml", "wb") as f:
            f.write(envelope.original_content)
        meta = {
            "mail_from": envelope.mail_from,
            "rcpt_tos": envelope.rcpt_tos,
            "auth_user": getattr(session, "_gatehouse_user", None),
            "tls": (session.ssl is not None
                    or server.transport.get_extra_info("ssl_object") is not None),
            "file": os.path.basename(base + ".eml"),
        }
        with open(base + ".json.tmp", "w") as f:
            json.dump(meta, f)
        os.replace(base + ".json.tmp", base + ".json")
        return "250 OK: queued as %d" % n


class Authenticator:
    def __init__(self, directory, user, password):
        self.path = os.path.join(directory, "auth.log")
        self.user = user
        self.password = password
        self.lock = threading.Lock()

    def __call__(self, server, session, envelope, mechanism, auth_data):
        ok = False
        login = "?"
        if isinstance(auth_data, LoginPassword):
            login = auth_data.login.decode("utf-8", "replace")
            ok = (auth_data.login == self.user.encode()
                  and auth_data.password == self.password.encode())
        with self.lock, open(self.path, "a") as f:
            f.write(f"{mechanism} {login} {'ok' if ok else 'fail'}\n")
        if ok:
            session._gatehouse_user = login
        # handled=False: let aiosmtpd send the standard 235 / 535 reply itself.
        return AuthResult(success=ok, handled=False)


class PortZeroController(Controller):
    """Controller that binds the requested port (0: any free one) and learns the real
    port before start() probes it."""

    def _create_server(self):
        async def create():
            srv = await self.loop.create_server(
                self._factory_invoker, host=self.hostname, port=self.port, ssl=self.ssl_context)
            self.port = srv.sockets[0].getsockname()[1]
            return srv
        return create()


def serve(args):
    os.makedirs(args.dir, exist_ok=True)
    handler = RecordingHandler(args.dir, args.fail_mode, args.reject_fraction)

    tls = None
    if args.mode in ("starttls", "tls"):
        if not (args.cert and args.key):
            sys.exit("--cert and --key are required for mode " + args.mode)
        tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        tls.load_cert_chain(args.cert, args.key)

    kwargs = {"server_hostname": "gatehouse-test-smtp"}
    if args.mode == "starttls":
        kwargs["tls_context"] = tls
        kwargs["require_starttls"] = True
    elif args.mode == "tls":
        kwargs["ssl_context"] = tls
    if args.auth_user is not None:
        kwargs["authenticator"] = Authenticator(args.dir, args.auth_user, args.auth_pass or "")
        kwargs["auth_required"] = True
        # In plain mode AUTH is offered without TLS so that the client's own
        # refusal (allowInsecureAuth) is what is being tested.
        # aiosmtpd only knows about STARTTLS-TLS for auth_require_tls; with
        # implicit TLS the whole connection is encrypted anyway.
        kwargs["auth_require_tls"] = args.mode == "starttls"
        if args.auth_exclude:
            kwargs["auth_exclude_mechanism"] = [args.auth_exclude.upper()]

    controller = PortZeroController(handler, hostname="127.0.0.1", port=args.port, **kwargs)
    controller.start()
    print(f"READY {controller.port}", flush=True)

    stop = threading.Event()
    # A parent's worker thread may have spawned us with these signals blocked.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    if args.exit_on_stdin_eof:
        # Stop when the parent goes away (its end of our stdin pipe is closed).
        def watch_stdin():
            try:
                sys.stdin.read()
            finally:
                stop.set()
        threading.Thread(target=watch_stdin, daemon=True).start()
    stop.wait()
    try:
        controller.stop(no_assert=True)
    except Exception:
        pass


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen-certs")
    g.add_argument("--out", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--dir", required=True)
    s.add_argument("--mode", choices=["plain", "starttls", "tls"], default="plain")
    s.add_argument("--port", type=int, default=0, help="0 (default): any free port")
    s.add_argument("--cert")
    s.add_argument("--key")
    s.add_argument("--auth-user")
    s.add_argument("--auth-pass")
    s.add_argument("--auth-exclude", choices=["PLAIN", "LOGIN", "plain", "login"])
    s.add_argument("--fail-mode", default="none",
                   choices=["none", "rcpt-451", "rcpt-550", "mail-451", "data-554",
                            "drop-on-rcpt", "drop-on-data", "hang-on-data"])
    s.add_argument("--reject-fraction", type=float, default=0.0)
    s.add_argument("--exit-on-stdin-eof", action="store_true",
                   help="stop when stdin reaches EOF (parent test process died)")
    args = p.parse_args()
    if args.cmd == "gen-certs":
        gen_certs(args.out)
    else:
        serve(args)


if __name__ == "__main__":
    main()
