#!/usr/bin/env python3
"""WebSocket fuzzer for the customer gateway (`ws://HOST:PORT/customer-gateway/customer`).

Python 3 standard library only: asyncio streams and a hand-written RFC 6455 frame codec, so it
can send frames no WebSocket library would (unmasked, reserved bits and opcodes, bad lengths,
broken fragmentation, invalid UTF-8, half-written handshakes).

Every case is generated from `--seed` and its index, runs on its own connection(s), and is
checked against a reference model written from RFC 6455 and docs/websocket-login.md:

  * each complete text message the server accepted gets exactly one answer of the documented
    shape: CUSTOMER_API_TOKEN for a good login, CUSTOMER_ERROR with the right error_code,
    sequence_id and in_event otherwise (answers are matched to requests by content, since they
    may come back in any order);
  * a message that must fail the connection gets a close frame with a correct code (1002, 1007,
    1009, ...) followed by the TCP close, and no answer after it;
  * pings get pongs with the same payload; the client's close gets a close back;
  * nothing hangs past `--timeout`; every server frame is itself well-formed.

Between batches `/health` must answer 200; at the end a fresh LOGIN_CUSTOMER must still work
and its token must be accepted by `GET /api/users/user`.

  python3 Fuzz/websocket.py --port 19300 --email E --password P --cases 500 --seed 1

Fuzz/websocket.sh starts a server and two accounts and runs this (`bash Fuzz/websocket.sh --seed S
--only N` replays case N of a seed with a trace of every frame); `--list-rules` prints the rule ids failures are filed under
(`--xfail RULE,...` reports those failures as expected instead of failing the run).
"""
from __future__ import annotations

import argparse
import asyncio
import base64
import calendar
import collections
import hashlib
import json
import os
import random
import re
import socket
import struct
import sys
import time
import unicodedata
import uuid

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
PATH = "/customer-gateway/customer"

RULES = {
    "gateway-protocol": "a text frame is answered with the CUSTOMER_ERROR the docs give for it",
    "gateway-login": "LOGIN_CUSTOMER answers CUSTOMER_API_TOKEN for the right password, customer.notFound otherwise",
    "auth-password-exact": "a password that only starts with the right one (NUL, 72+ bytes) is refused",
    "doc-email-only": "only emails log in: '@tag' / phone / login names get customer.notFound",
    "doc-in-event-type-64": "in_event.type is truncated to 64 characters in every error",
    "doc-binary": "a binary message gets request.binaryNotSupported",
    "doc-idle-timeout": "a connection without data frames is closed with 1001 after the idle timeout",
    "limit-max-frame": "a frame or message over GATEHOUSE_WS_MAX_FRAME_BYTES closes with 1009",
    "rfc-invalid-utf8": "a text message that is not UTF-8 fails the connection with 1007",
    "rfc-unmasked": "an unmasked client frame fails the connection (1002)",
    "rfc-rsv-bits": "reserved bits on a data frame fail the connection (1002)",
    "rfc-rsv-control": "reserved bits on a control frame fail the connection (1002)",
    "rfc-reserved-opcode": "a reserved opcode fails the connection (1002)",
    "rfc-fragmentation": "continuation without start / new message inside a fragmented one: 1002",
    "rfc-control-frame": "a fragmented control frame or one over 125 bytes: 1002",
    "rfc-close": "a close gets a close back: 1000 (or the echo) for a valid code, 1002 for an invalid one",
    "rfc-close-reason-utf8": "a close reason that is not UTF-8 fails with 1007 or 1002",
    "rfc-ping-pong": "a ping gets a pong with the same payload",
    "rfc-handshake": "a valid handshake gets 101 with the right Sec-WebSocket-Accept and no unasked extension",
    "rfc-handshake-validation": "an invalid handshake (bad key, HTTP/1.0, no Connection: Upgrade) is refused, not upgraded",
    "http-invalid-request": "garbage instead of an HTTP request is answered with 4xx or the connection is closed",
    "server-frame": "every server frame is well-formed (unmasked, no RSV, valid UTF-8 text, valid close)",
    "data-after-close": "no data frame after the server's close frame",
    "hang": "the server answers or closes within --timeout",
    "unexpected-close": "the server does not close a connection that did nothing wrong",
    "health": "/health answers 200 between batches; a fresh login works at the end",
}

# Rules the server broke when this fuzzer was written (see docs/reliability.md, "WebSocket
# fuzzing"). `--xfail known` expects all of them; `--xfail upstream` only those that live in the
# WebSocket/HTTP libraries (swift-websocket, hummingbird-websocket, swift-nio), i.e. what is
# left once the Gatehouse-side fixes are in.
UPSTREAM_FINDINGS = ["rfc-unmasked", "rfc-rsv-control", "data-after-close", "rfc-handshake-validation",
                     "http-invalid-request"]
KNOWN_FINDINGS = ["auth-password-exact", "doc-email-only", "doc-in-event-type-64", "rfc-invalid-utf8",
                  "rfc-close-reason-utf8"] + UPSTREAM_FINDINGS
XFAIL_ALIASES = {"known": KNOWN_FINDINGS, "upstream": UPSTREAM_FINDINGS}

# ----------------------------------------------------------------------------- frame codec

class Frame:
    """A client frame. `length` overrides the length field; `header_only` sends no payload."""

    __slots__ = ("op", "payload", "fin", "rsv", "mask", "length", "header_only", "form", "key")

    def __init__(self, op, payload=b"", fin=True, rsv=0, mask=True, length=None, header_only=False, form=None, key=None):
        self.op, self.payload, self.fin, self.rsv, self.mask = op, payload, fin, rsv, mask
        self.length, self.header_only, self.form, self.key = length, header_only, form, key

    @property
    def claimed(self):
        return len(self.payload) if self.length is None else self.length

    def encode(self, rng):
        n = self.claimed
        out = bytearray([(0x80 if self.fin else 0) | ((self.rsv & 7) << 4) | (self.op & 0xF)])
        mb = 0x80 if self.mask else 0
        form = self.form or (7 if n < 126 else 16 if n < 65536 else 64)
        if form == 7:
            out.append(mb | n)
        elif form == 16:
            out.append(mb | 126)
            out += struct.pack(">H", n)
        else:
            out.append(mb | 127)
            out += struct.pack(">Q", n)
        payload = self.payload
        if self.mask:
            key = self.key if self.key is not None else bytes(rng.getrandbits(8) for _ in range(4))
            out += key
            payload = xor_mask(payload, key)
        if not self.header_only:
            out += payload
        return bytes(out)

    def describe(self):
        names = {0: "cont", 1: "text", 2: "bin", 8: "close", 9: "ping", 10: "pong"}
        s = names.get(self.op, f"op{self.op}")
        flags = ("" if self.fin else " !fin") + (f" rsv={self.rsv}" if self.rsv else "") + ("" if self.mask else " UNMASKED")
        if self.length is not None:
            flags += f" len={self.length}"
        if self.header_only:
            flags += " header-only"
        if self.form:
            flags += f" form={self.form}"
        p = self.payload
        shown = p[:60].decode("utf-8", "backslashreplace")
        return f"{s}{flags} {len(p)}B {shown!r}{'…' if len(p) > 60 else ''}"


def xor_mask(data, key):
    if not data:
        return b""
    k = (key * (len(data) // 4 + 1))[: len(data)]
    return (int.from_bytes(data, "big") ^ int.from_bytes(k, "big")).to_bytes(len(data), "big")


def close_payload(code, reason=b""):
    return struct.pack(">H", code) + reason


# ----------------------------------------------------------------------------- text helpers

def is_extend(ch):
    return unicodedata.category(ch) in ("Mn", "Me", "Mc") or ch == "\u200d" or "\ufe00" <= ch <= "\ufe0f"


def clusters(s):
    """Grapheme clusters, close enough to Swift's Character for the alphabet the generator uses
    (ASCII, Cyrillic, CJK, combining marks, emoji without modifiers, CR LF)."""
    out = []
    for ch in s:
        if out and (is_extend(ch) or (out[-1] == "\r" and ch == "\n") or out[-1].endswith("\u200d")):
            out[-1] += ch
        else:
            out.append(ch)
    return out


def prefix_chars(s, n):
    return "".join(clusters(s)[:n])


SWIFT_WS = {"\t"} | {chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) == "Zs"}
SWIFT_WSNL = SWIFT_WS | {"\n", "\x0b", "\x0c", "\r", "\x85", "\u2028", "\u2029"}


def utf8_ok(b):
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def utf8len(s):
    return len(s.encode("utf-8", "surrogatepass"))


# ----------------------------------------------------------------------------- expected answers

class Spec:
    """One acceptable answer: CUSTOMER_API_TOKEN or CUSTOMER_ERROR with `code`."""

    __slots__ = ("kind", "code", "seq", "in_type", "in_email")

    def __init__(self, kind, code=None, seq="", in_type=None, in_email=None):
        self.kind, self.code, self.seq, self.in_type, self.in_email = kind, code, seq, in_type, in_email

    def matches(self, obj):
        if obj.get("sequence_id") != self.seq:
            return False
        if self.kind == "token":
            return obj.get("type") == "CUSTOMER_API_TOKEN"
        if obj.get("type") != "CUSTOMER_ERROR":
            return False
        data = obj.get("data", {})
        if data.get("error_code") != self.code:
            return False
        ev = data.get("in_event", {})
        if ev.get("sequence_id") != self.seq:
            return False
        if (self.in_type is None) != ("type" not in ev):
            return False
        if self.in_type is not None and ev["type"] not in (prefix_chars(self.in_type, 64), self.in_type):
            return False   # an untruncated type is reported by shape_problems, under its own rule
        if (self.in_email is None) != ("email" not in ev):
            return False
        if self.in_email is not None and ev["email"] not in (prefix_chars(self.in_email, 254), self.in_email):
            return False
        return True

    def __repr__(self):
        if self.kind == "token":
            return f"TOKEN(seq={short(self.seq)})"
        return f"{self.code}(seq={short(self.seq)}, type={short(self.in_type)}, email={short(self.in_email)})"


def short(v, n=40):
    if v is None:
        return "-"
    r = repr(v)
    return r if len(r) <= n else r[: n - 1] + "…"


class Expected:
    """An answer the server owes for one delivered message (any of `alts` is correct)."""

    def __init__(self, alts, rule, what):
        self.alts, self.rule, self.what = alts, rule, what


class Model:
    """What the server must do with a sequence of frames on one connection."""

    def __init__(self):
        self.answers = []          # Expected, for messages delivered before any fatal frame
        self.pongs = []            # payloads of our pings, in order
        self.fatal = None          # (codes, rule, why) when the server must fail the connection
        self.fatal_index = None    # index of the frame that fails it
        self.client_close = None   # (codes, rule, why) when we sent a close frame
        self.may_close = set()     # codes the server MAY close with instead (lenient spots)
        self.reset_ok = False      # a TCP reset instead of the close frame is acceptable
        self.decoder_fatal = False # the failing frame is refused at its header (length, control)


class Ctx:
    def __init__(self, args):
        self.max_frame = args.max_frame_bytes
        self.accounts = {}        # normalized email -> password
        self.tags = []
        self.primary = (args.email, args.password)
        self.accounts[args.email.lower()] = args.password
        if args.email72:
            self.accounts[args.email72.lower()] = args.password72
        if args.tag:
            self.tags.append(args.tag)
        self.email72 = args.email72
        self.password72 = args.password72
        self.failures = collections.Counter()   # failed logins the model expects, per account
        self.account_limit = args.account_failure_limit
        self.session_ttl = args.session_ttl
        self.idle_timeout = args.idle_timeout


def json_variants(text):
    """Interpretations of `text` a conforming JSON parser may pick, as ("ok", value) or
    ("bad", None). RFC 8259 leaves room: duplicate keys may be first- or last-wins; a parser may
    skip a BOM, accept trailing commas (section 9: "MAY accept non-JSON forms or extensions"),
    and refuse numbers it cannot represent, lone surrogates and very deep nesting."""
    out = []

    def parse(t, first_wins):
        dup, odd = [False], [False]

        def hook(pairs):
            d = {}
            for k, v in pairs:
                if k in d:
                    dup[0] = True
                    if first_wins:
                        continue
                d[k] = v
            return d

        def bad_constant(_):
            raise ValueError("constant")

        def number(lit):
            f = float(lit)
            mantissa = re.split(r"[eE]", lit)[0]
            if f in (float("inf"), float("-inf")) or (f == 0 and re.search(r"[1-9]", mantissa)):
                odd[0] = True   # out of double range: a parser may refuse it
            return f

        v = json.loads(t, object_pairs_hook=hook, parse_constant=bad_constant, parse_float=number, parse_int=number)
        return v, dup[0], odd[0]

    texts = [text]
    if text.startswith("\ufeff"):
        texts.append(text[1:])
    relaxed = [without_trailing_commas(t) for t in texts]
    texts += [t for t in relaxed if t not in texts]
    for n, t in enumerate(texts):
        try:
            v, dup, odd = parse(t, False)
        except (ValueError, RecursionError):
            if n == 0:
                out.append(("bad", None))
            continue
        out.append(("ok", v))
        if dup:
            out.append(("ok", parse(t, True)[0]))
        if odd or not representable(v):
            out.append(("bad", None))
    return out


def without_trailing_commas(text):
    """`text` with commas right before } or ] (outside strings) removed."""
    out, in_str, esc = [], False, False
    for i, ch in enumerate(text):
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch == ",":
            rest = text[i + 1:].lstrip(" \t\r\n")
            if rest[:1] in ("}", "]"):
                continue
        out.append(ch)
    return "".join(out)


def representable(v):
    """Whether a Swift JSONDecoder into Double/String surely reads `v` (iterative: values can be
    nested thousands deep)."""
    stack = [(v, 0)]
    while stack:
        x, d = stack.pop()
        if d > 400:
            return False
        if isinstance(x, bool) or x is None:
            continue
        if isinstance(x, str):
            if any("\ud800" <= c <= "\udfff" for c in x):
                return False
        elif isinstance(x, list):
            stack.extend((y, d + 1) for y in x)
        elif isinstance(x, dict):
            stack.extend((k, d + 1) for k in x)
            stack.extend((y, d + 1) for y in x.values())
    return True


def answer_specs(text, ctx):
    """(alternatives, rule) for one text message."""
    alts, rules = [], []
    for status, v in json_variants(text):
        if status == "bad" or not isinstance(v, dict):
            alts.append(Spec("error", "request.malformedJson", ""))
            rules.append("gateway-protocol")
            continue
        spec, rule = object_spec(v, ctx)
        alts.extend(spec if isinstance(spec, list) else [spec])
        rules.append(rule)
    rule = next((r for r in rules if r != "gateway-protocol"), "gateway-protocol")
    return alts, rule


def object_spec(obj, ctx):
    t = obj.get("type")
    tstr = t if isinstance(t, str) else None
    seq_raw = obj.get("sequence_id")
    if "sequence_id" in obj and seq_raw is not None and not isinstance(seq_raw, str):
        rule = "doc-in-event-type-64" if tstr is not None and len(clusters(tstr)) > 64 else "gateway-protocol"
        return Spec("error", "request.invalidSequenceId", "", tstr, None), rule
    seq = seq_raw if isinstance(seq_raw, str) else ""
    data = obj.get("data") if isinstance(obj.get("data"), dict) else None
    email = data.get("email") if data is not None and isinstance(data.get("email"), str) else None
    if not tstr:
        return Spec("error", "request.missingType", seq, tstr, email), "gateway-protocol"
    if tstr != "LOGIN_CUSTOMER":
        return Spec("error", "request.unknownType", seq, tstr, email), "gateway-protocol"
    password = data.get("password") if data is not None and isinstance(data.get("password"), str) else None
    email_t = prefix_chars(email, 254) if email is not None else None
    if email_t is None or password is None or email_t == "" or password == "" or utf8len(password) > 1024:
        return Spec("error", "request.invalidData", seq, tstr, email), "gateway-protocol"
    if "\u0000" in email_t or "\u0000" in password:   # text never holds U+0000 (docs/security.md)
        return Spec("error", "request.invalidData", seq, tstr, email), "gateway-protocol"
    ok, rule, account = login_outcome(email_t, password, ctx)
    if ok:
        return Spec("token", seq=seq), rule
    spec = Spec("error", "customer.notFound", seq, tstr, email)
    if account is not None:
        ctx.failures[account] += 1
        if ctx.failures[account] > ctx.account_limit * 0.9:   # answers race: stay clear of the edge
            return [spec, Spec("error", "customer.tooManyAttempts", seq, tstr, email)], rule
    return spec, rule


def login_outcome(email, password, ctx):
    """(logs in?, rule, account whose failure budget it uses)."""
    if "@" not in email:
        return False, "gateway-login", None
    ident = email.strip("".join(SWIFT_WS))
    if ident.startswith("@") and "@" not in ident[1:]:
        return False, "doc-email-only", None
    norm = ident.strip("".join(SWIFT_WSNL)).lower()
    pw = ctx.accounts.get(norm)
    if pw is None:
        return False, "gateway-login", None
    if password == pw:
        return True, "gateway-login", norm
    if password.startswith(pw):
        return False, "auth-password-exact", norm
    return False, "gateway-login", norm


def model_frames(frames, ctx):
    """Walk the frames as a conforming server would and return the Model."""
    m = Model()
    frag = None  # (opcode, bytearray)
    for i, f in enumerate(frames):
        codes, rules = set(), []

        def fail(c, r):
            codes.update(c)
            rules.append(r)

        n = f.claimed
        control = bool(f.op & 0x8)
        if n > ctx.max_frame:
            fail({1009} | ({1002} if n >= 1 << 63 else set()), "limit-max-frame")
        if not f.mask:
            fail({1002}, "rfc-unmasked")
        if control:
            if f.op not in (8, 9, 10):
                fail({1002}, "rfc-reserved-opcode")
            if not f.fin or n > 125:
                fail({1002}, "rfc-control-frame")
            if f.rsv:
                fail({1002}, "rfc-rsv-control")
        else:
            if f.op not in (0, 1, 2):
                fail({1002}, "rfc-reserved-opcode")
            if f.rsv:
                fail({1002}, "rfc-rsv-bits")
            if f.op == 0 and frag is None:
                fail({1002}, "rfc-fragmentation")
            if f.op in (1, 2) and frag is not None:
                fail({1002}, "rfc-fragmentation")
            if f.op == 0 and frag is not None and len(frag[1]) + n > ctx.max_frame:
                fail({1009}, "limit-max-frame")
        if f.form and f.form != (7 if n < 126 else 16 if n < 65536 else 64):
            m.may_close.add(1002)   # the length must be minimal; a server MAY fail such a frame
        if codes:
            m.fatal, m.fatal_index = (codes, rules[0], f.describe()), i
            m.decoder_fatal = n > ctx.max_frame or (control and (not f.fin or n > 125))
            return m
        if f.op == 9:
            m.pongs.append(f.payload)
        elif f.op == 8:
            m.client_close = close_expectation(f.payload)
            m.fatal_index = i
            return m
        elif f.op in (1, 2):
            frag = (f.op, bytearray(f.payload))
        elif f.op == 0:
            frag[1].extend(f.payload)
        if f.op in (0, 1, 2) and f.fin:
            op, data = frag
            frag = None
            if op == 2:
                m.answers.append(Expected([Spec("error", "request.binaryNotSupported", "")], "doc-binary", f"binary {len(data)}B"))
            elif not utf8_ok(bytes(data)):
                m.fatal, m.fatal_index = ({1007}, "rfc-invalid-utf8", f"text {bytes(data[:40])!r}"), i
                return m
            else:
                text = bytes(data).decode("utf-8")
                alts, rule = answer_specs(text, ctx)
                m.answers.append(Expected(alts, rule, f"text {short(text, 70)}"))
    return m


VALID_CLOSE = set(range(1000, 1004)) | set(range(1007, 1012)) | set(range(3000, 5000))


def close_expectation(payload):
    if len(payload) == 0:
        return ({1000}, "rfc-close", "empty close")
    if len(payload) == 1:
        return ({1002}, "rfc-close", "1-byte close payload")
    code = struct.unpack(">H", payload[:2])[0]
    if not utf8_ok(payload[2:]):
        return ({1002, 1007}, "rfc-close-reason-utf8", f"close {code} with a non-UTF-8 reason")
    if code in VALID_CLOSE:
        return ({1000, code}, "rfc-close", f"close {code}")
    if code in (1012, 1013, 1014):   # registered after RFC 6455: either answer is fine
        return ({1000, code, 1002}, "rfc-close", f"close {code}")
    return ({1002}, "rfc-close", f"close with invalid code {code}")


# ----------------------------------------------------------------------------- connection

class Conn:
    """A raw client connection: handshake, write bytes, read and check server frames."""

    def __init__(self, args, trace=None):
        self.args, self.trace = args, trace
        self.reader = self.writer = None
        self.events = []          # ("text", str) ("binary", b) ("pong", b) ("close", code, reason) ("eof",) ("reset",)
        self.problems = []        # server frames that break RFC 6455
        self.closed_frame = None  # (code, reason) of the server's close
        self.eof = False
        self.changed = asyncio.Event()
        self.task = None
        # Held while a frame stream goes out in pieces, so an automatic pong can't land in the
        # middle of one of our frames.
        self.send_lock = asyncio.Lock()

    def log(self, msg):
        if self.trace is not None:
            self.trace.append(f"{time.monotonic():.3f} {msg}")

    async def connect(self):
        self.reader, self.writer = await asyncio.open_connection(self.args.host, self.args.port, limit=1 << 22)

    def handshake_bytes(self, key=None, extra="", path=PATH, version="13", proto="HTTP/1.1", upgrade="websocket", connection="Upgrade"):
        self.key = key if key is not None else base64.b64encode(os.urandom(16)).decode()
        lines = [f"GET {path} {proto}", f"Host: {self.args.host}:{self.args.port}"]
        if upgrade is not None:
            lines.append(f"Upgrade: {upgrade}")
        if connection is not None:
            lines.append(f"Connection: {connection}")
        if self.key != "":
            lines.append(f"Sec-WebSocket-Key: {self.key}")
        if version is not None:
            lines.append(f"Sec-WebSocket-Version: {version}")
        return ("\r\n".join(lines) + "\r\n" + extra + "\r\n").encode()

    async def read_head(self, timeout):
        try:
            head = await asyncio.wait_for(self.reader.readuntil(b"\r\n\r\n"), timeout)
        except asyncio.IncompleteReadError as e:
            return e.partial or None
        except (asyncio.LimitOverrunError, ConnectionError):
            return None
        return head

    async def open(self, timeout, **kw):
        """Connect and upgrade. Returns None on success, else a problem string."""
        await self.connect()
        await self.send(self.handshake_bytes(**kw))
        head = await self.read_head(timeout)
        if head is None:
            return "no handshake answer"
        problem = check_upgrade(head, self.key)
        if problem:
            return problem
        self.task = asyncio.ensure_future(self.read_loop())
        return None

    async def send(self, data):
        try:
            self.writer.write(data)
            await self.writer.drain()
            return True
        except (ConnectionError, RuntimeError, OSError):
            return False

    async def send_chunked(self, data, rng, style):
        async with self.send_lock:
            return await self._send_chunked(data, rng, style)

    async def _send_chunked(self, data, rng, style):
        if style == "whole" or len(data) < 2:
            return await self.send(data)
        pos = 0
        while pos < len(data):
            step = rng.randint(1, 7) if style == "tiny" else rng.randint(1, max(1, len(data) // 3))
            if not await self.send(data[pos:pos + step]):
                return False
            pos += step
            if style == "tiny" or rng.random() < 0.3:
                await asyncio.sleep(rng.choice([0, 0, 0.001, 0.003]))
        return True

    async def read_loop(self):
        r = self.reader
        frag = None
        try:
            while True:
                h = await r.readexactly(2)
                fin, rsv, op = h[0] >> 7, (h[0] >> 4) & 7, h[0] & 0xF
                masked, n = h[1] >> 7, h[1] & 0x7F
                if n == 126:
                    n = struct.unpack(">H", await r.readexactly(2))[0]
                elif n == 127:
                    n = struct.unpack(">Q", await r.readexactly(8))[0]
                if masked:
                    self.problems.append("server frame is masked")
                    key = await r.readexactly(4)
                if n > 1 << 24:
                    self.problems.append(f"server frame claims {n} bytes")
                    break
                payload = await r.readexactly(n)
                if masked:
                    payload = xor_mask(payload, key)
                if rsv:
                    self.problems.append(f"server frame has RSV={rsv}")
                if self.closed_frame is not None:
                    self.problems.append(f"frame op={op} after the server's close frame")
                self.log(f"<- op={op} fin={fin} {n}B {payload[:80]!r}")
                if op & 8:
                    if not fin or n > 125:
                        self.problems.append(f"bad server control frame op={op} fin={fin} len={n}")
                    if op == 9:
                        if self.closed_frame is None:
                            asyncio.ensure_future(self.pong(payload))
                    elif op == 10:
                        self.events.append(("pong", payload))
                    elif op == 8:
                        code, reason = None, b""
                        if n == 1:
                            self.problems.append("server close payload of 1 byte")
                        if n >= 2:
                            code, reason = struct.unpack(">H", payload[:2])[0], payload[2:]
                            if code not in VALID_CLOSE and code not in (1012, 1013, 1014):
                                self.problems.append(f"server close code {code} is not valid on the wire")
                            if not utf8_ok(reason):
                                self.problems.append("server close reason is not UTF-8")
                        self.closed_frame = (code, reason)
                        self.events.append(("close", code, reason))
                    else:
                        self.problems.append(f"server sent reserved opcode {op}")
                else:
                    if op == 0:
                        if frag is None:
                            self.problems.append("server continuation without start")
                            continue
                        frag[1].extend(payload)
                    elif op in (1, 2):
                        if frag is not None:
                            self.problems.append("server started a message inside a fragmented one")
                        frag = (op, bytearray(payload))
                    else:
                        self.problems.append(f"server sent reserved opcode {op}")
                        continue
                    if fin:
                        mop, data = frag
                        frag = None
                        if mop == 1:
                            if not utf8_ok(bytes(data)):
                                self.problems.append("server text frame is not UTF-8")
                            self.events.append(("text", bytes(data).decode("utf-8", "replace")))
                        else:
                            self.problems.append("server sent a binary message")
                            self.events.append(("binary", bytes(data)))
                self.changed.set()
        except asyncio.IncompleteReadError:
            self.events.append(("eof",))
        except (ConnectionError, OSError):
            self.events.append(("reset",))
        except asyncio.CancelledError:
            return
        self.eof = True
        self.changed.set()

    async def pong(self, payload):
        async with self.send_lock:
            if self.closed_frame is None:
                await self.send(Frame(10, payload).encode(random))

    async def wait_until(self, pred, deadline):
        while not pred():
            left = deadline - time.monotonic()
            if left <= 0 or (self.eof and not pred()):
                return pred()
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(), left)
            except asyncio.TimeoutError:
                pass
        return True

    def texts(self):
        return [e[1] for e in self.events if e[0] == "text"]

    def pong_payloads(self):
        return [e[1] for e in self.events if e[0] == "pong"]

    def abort(self):
        if self.task:
            self.task.cancel()
        if self.writer:
            try:
                self.writer.transport.abort()
            except Exception:
                pass

    def reset(self):
        """Close with an RST instead of a FIN."""
        sock = self.writer.get_extra_info("socket") if self.writer else None
        if sock is not None:
            try:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            except OSError:
                pass
        self.abort()


def check_upgrade(head, key):
    lines = head.decode("latin-1").split("\r\n")
    if not re.match(r"HTTP/1\.1 101 ", lines[0]):
        return f"handshake answered {lines[0]!r}"
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            headers.setdefault(k.strip().lower(), []).append(v.strip())
    accept = base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()).decode()
    if headers.get("sec-websocket-accept") != [accept]:
        return f"Sec-WebSocket-Accept {headers.get('sec-websocket-accept')} != {accept}"
    if "websocket" not in [v.lower() for v in headers.get("upgrade", [])]:
        return "no Upgrade: websocket"
    if "sec-websocket-extensions" in headers:
        return f"server accepted an extension: {headers['sec-websocket-extensions']}"
    return None


# ----------------------------------------------------------------------------- answer checks

UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
DATE_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


def shape_problems(raw, ctx, seen_uuids):
    """Problems with one answer's shape, whatever it answers. Returns (obj or None, problems)."""
    order_ok = [True]

    def hook(pairs):
        keys = [k for k, _ in pairs]
        if keys != sorted(keys):
            order_ok[0] = False
        return dict(pairs)

    try:
        obj = json.loads(raw, object_pairs_hook=hook)
    except ValueError:
        return None, [f"answer is not JSON: {raw[:120]!r}"]
    p = []
    if not isinstance(obj, dict):
        return None, [f"answer is not an object: {raw[:120]!r}"]
    if not order_ok[0]:
        p.append("keys are not sorted")
    if set(obj) != {"type", "sequence_id", "data"}:
        p.append(f"top-level keys {sorted(obj)}")
    if not isinstance(obj.get("sequence_id"), str):
        p.append("sequence_id is not a string")
    data = obj.get("data")
    if not isinstance(data, dict):
        return obj, p + ["data is not an object"]
    if obj.get("type") == "CUSTOMER_API_TOKEN":
        if set(data) != {"api_token", "api_token_expiration_date"}:
            p.append(f"token data keys {sorted(data)}")
        if not isinstance(data.get("api_token"), str) or not data.get("api_token"):
            p.append("api_token missing")
        exp = data.get("api_token_expiration_date")
        if not isinstance(exp, str) or not DATE_RE.match(exp):
            p.append(f"api_token_expiration_date {exp!r}")
        else:
            t = calendar.timegm(time.strptime(exp, "%Y-%m-%dT%H:%M:%SZ"))
            if abs(t - (time.time() + ctx.session_ttl)) > 600:
                p.append(f"api_token_expiration_date {exp} is not now + {ctx.session_ttl}s")
    elif obj.get("type") == "CUSTOMER_ERROR":
        if set(data) != {"error_code", "error_description", "error_uuid", "in_event"}:
            p.append(f"error data keys {sorted(data)}")
        if not isinstance(data.get("error_description"), str) or not data.get("error_description"):
            p.append("error_description missing")
        u = data.get("error_uuid")
        if not isinstance(u, str) or not UUID_RE.match(u):
            p.append(f"error_uuid {u!r}")
        elif u in seen_uuids:
            p.append(f"error_uuid {u} repeated")
        else:
            seen_uuids.add(u)
        ev = data.get("in_event")
        if not isinstance(ev, dict):
            p.append("in_event is not an object")
        else:
            if not set(ev) <= {"type", "sequence_id", "email", "event_id", "customer_id"}:
                p.append(f"in_event keys {sorted(ev)} (the password must never be echoed)")
            # docs/websocket-login.md: the frame's id on the server, a lower-case UUID new for every frame; the
            # account's id only after its right password, so that the answer never tells whether an account exists.
            e = ev.get("event_id")
            if not isinstance(e, str) or not UUID_RE.match(e):   # UUID_RE: lower case only
                p.append(f"in_event.event_id {e!r} is not a lower-case UUID")
            elif e in seen_uuids:
                p.append(f"in_event.event_id {e} repeated")
            else:
                seen_uuids.add(e)
            if "customer_id" in ev and data.get("error_code") not in ("customer.accountLocked", "customer.secondFactorRequired"):
                p.append(f"in_event.customer_id with {data.get('error_code')} (it tells whether the account exists)")
            if ev.get("sequence_id") != obj.get("sequence_id"):
                p.append("in_event.sequence_id differs from sequence_id")
            for k in ("type", "email"):
                if k in ev and not isinstance(ev[k], str):
                    p.append(f"in_event.{k} is not a string")
            if isinstance(ev.get("type"), str) and len(clusters(ev["type"])) > 64:
                p.append(f"in_event.type has {len(clusters(ev['type']))} characters (docs: truncated to 64)")
            if isinstance(ev.get("email"), str) and len(clusters(ev["email"])) > 254:
                p.append(f"in_event.email has {len(clusters(ev['email']))} characters (docs: truncated to 254)")
    else:
        p.append(f"unknown answer type {obj.get('type')!r}")
    return obj, p


def match_answers(expected, received):
    """Maximum bipartite matching received -> expected. Returns (pairs, unmatched_received, unmatched_expected)."""
    adj = [[j for j, e in enumerate(expected) if any(s.matches(obj) for s in e.alts)] for obj in received]
    owner = [None] * len(expected)

    def augment(i, seen):
        for j in adj[i]:
            if j in seen:
                continue
            seen.add(j)
            if owner[j] is None or augment(owner[j], seen):
                owner[j] = i
                return True
        return False

    # Answers that name their request go first, so an unexplained answer is one with "".
    for i in sorted(range(len(received)), key=lambda i: received[i].get("sequence_id") in ("", None)):
        augment(i, set())
    got = {owner[j] for j in range(len(expected)) if owner[j] is not None}
    return ([(owner[j], j) for j in range(len(expected)) if owner[j] is not None],
            [i for i in range(len(received)) if i not in got],
            [j for j in range(len(expected)) if owner[j] is None])


def explain_swaps(expected, received, pairs, extra, missing):
    """Among equally large matchings, pick the one that explains the mismatches best: an
    unmatched answer should sit next to the missing request with its sequence_id, and that
    request should be the one with the most specific rule. Returns (pairs, extra, missing)."""
    generic = ("gateway-protocol", "gateway-login")
    pairs, extra, missing = list(pairs), list(extra), list(missing)

    def same_seq(i, j):
        return any(s.seq == received[i].get("sequence_id") for s in expected[j].alts)

    def explained(i):
        return any(same_seq(i, j) for j in missing)

    for i in list(extra):
        if not explained(i):
            # let a matched answer that a missing request explains give its slot to this one
            for k, (i2, j) in enumerate(pairs):
                if explained(i2) and any(s.matches(received[i]) for s in expected[j].alts):
                    pairs[k] = (i, j)
                    extra[extra.index(i)] = i2
                    break
    for i in extra:
        cands = [j for j in missing if same_seq(i, j)]
        if not cands or any(expected[j].rule not in generic for j in cands):
            continue
        # the request with a specific rule and this sequence_id got someone else's answer:
        # move that answer to the generic request it also fits
        for k, (i2, j) in enumerate(pairs):
            if same_seq(i, j) and expected[j].rule not in generic:
                j2 = next((j2 for j2 in cands if any(s.matches(received[i2]) for s in expected[j2].alts)), None)
                if j2 is not None:
                    pairs[k] = (i2, j2)
                    missing[missing.index(j2)] = j
                    break
    return pairs, extra, missing


# ----------------------------------------------------------------------------- generators

SAFE_CHARS = (
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-.@+:/\\\"'{}[],"
    "абвгдежзийклмнопрстуфхцчшщъыьэюя" "中文字符測試" "\u00e9\u00fc\u00df" "\U0001F600\U0001F642"
)


def rand_text(rng, n, alphabet=SAFE_CHARS):
    s = "".join(rng.choice(alphabet) for _ in range(n))
    if rng.random() < 0.2:
        s = "".join(c + ("\u0301" if rng.random() < 0.3 else "") for c in s)
    if rng.random() < 0.1:
        s += "\r\n" + rng.choice(["\u0000", "\t", "\x7f", "\u2028", "\ufeff"])
    return s


class Gen:
    """Produces the text of one request."""

    def __init__(self, rng, ctx, case_no):
        self.rng, self.ctx, self.case_no, self.n = rng, ctx, case_no, 0

    def seq(self):
        self.n += 1
        base = f"c{self.case_no}.{self.n}"
        r = self.rng.random()
        if r < 0.55:
            return base
        if r < 0.7:
            return str(uuid.UUID(int=self.rng.getrandbits(128)))
        if r < 0.85:
            return base + rand_text(self.rng, self.rng.randint(1, 30))
        if r < 0.95:
            return base + "x" * self.rng.randint(100, 1500)
        return self.rng.choice(["", " ", "\u0000", "\"", "\\", "null"])

    def email_for(self, kind):
        rng = self.rng
        email = self.ctx.primary[0]
        if kind == "valid":
            return rng.choice([email, email.upper(), " " + email + "\t", email + "\u00a0", "\n" + email.upper() + "\n", "\u3000" + email])
        if kind == "unknown":
            return rng.choice([f"nobody{rng.getrandbits(40)}@fuzz.invalid", f"NoBody{rng.getrandbits(30)}@example.org",
                               "a@b", "@", "x@", "@x", email + ".", "\u00e9" + email, email.replace("@", "@@")])
        if kind == "noat":
            return rng.choice([email.replace("@", ""), "+79123456789", "fuzzlogin", "79000000001", " "])
        if kind == "tag":
            tag = rng.choice(self.ctx.tags) if self.ctx.tags else "fz"
            return rng.choice(["@" + tag, "@" + tag.upper(), " @" + tag + " ", "@+79000000001"])
        return email

    def login(self, kind=None):
        rng = self.rng
        kinds = ["valid", "valid", "wrong", "unknown", "noat", "tag", "nul", "suffix"] + (["p72", "p72suffix"] if self.ctx.email72 else [])
        kind = kind or rng.choice(kinds)
        email, password = self.ctx.primary
        if kind == "valid":
            e, p = self.email_for("valid"), password
        elif kind == "wrong":
            e, p = self.email_for("valid"), rng.choice(["", password[:-1], password.upper(), password + " ", "x" * rng.randint(1, 80), rand_text(rng, 12)])
            p = p or "wrong"
        elif kind == "nul":
            e, p = email, password + "\u0000" + rand_text(rng, rng.randint(0, 20))
        elif kind == "suffix":
            e, p = email, password + rng.choice(["x", "\u0000", " ", "\t"]) * rng.randint(1, 70)
        elif kind == "p72":
            e, p = self.ctx.email72, self.ctx.password72
        elif kind == "p72suffix":
            e, p = self.ctx.email72, self.ctx.password72 + rand_text(rng, rng.randint(1, 30))
        elif kind == "tag":
            e, p = self.email_for("tag"), password
        else:
            e, p = self.email_for(kind), password if rng.random() < 0.5 else "fuzz-" + str(rng.getrandbits(20))
        msg = {"type": "LOGIN_CUSTOMER", "sequence_id": self.seq(), "data": {"email": e, "password": p}}
        return self.dump(msg)

    def dump(self, obj):
        rng = self.rng
        if isinstance(obj, dict) and rng.random() < 0.3:
            items = list(obj.items())
            rng.shuffle(items)
            obj = dict(items)
        return json.dumps(obj, ensure_ascii=rng.random() < 0.5,
                          separators=rng.choice([(",", ":"), (", ", ": "), (" ,\n", " :\t")]))

    def garbage(self):
        rng = self.rng
        k = rng.choice(GARBAGE_KINDS)
        seq = self.seq()
        good = {"type": "LOGIN_CUSTOMER", "sequence_id": seq, "data": {"email": self.ctx.primary[0], "password": self.ctx.primary[1]}}
        odd = [None, True, False, 0, -1, 3.5, 1e300, "", "x", [], [1, "a"], {}, {"a": None}]
        if k == "wrong-type":
            field = rng.choice(["type", "sequence_id", "data", "email", "password"])
            v = rng.choice(odd)
            if field in ("email", "password"):
                good["data"][field] = v
            else:
                good[field] = v
            return self.dump(good)
        if k == "missing":
            for f in rng.sample(["type", "sequence_id", "data"], rng.randint(1, 3)):
                good.pop(f)
            if "data" in good and rng.random() < 0.5:
                good["data"].pop(rng.choice(["email", "password"]))
            return self.dump(good)
        if k == "unknown-type":
            good["type"] = rng.choice(["LOGIN CUSTOMER", "login_customer", "LOGIN_CUSTOMER ", " LOGIN_CUSTOMER", "LOGIN_CUSTOMER\u0000",
                                       "CUSTOMER_ERROR", "CUSTOMER_API_TOKEN", "LOGOUT", "LOGIN_CUSTOMEＲ", "LOGIN_CUSTOMER\u0301",
                                       rand_text(rng, rng.randint(1, 40))])
            return self.dump(good)
        if k == "long-type":
            good["type"] = rand_text(rng, rng.randint(60, 300))
            if rng.random() < 0.5:
                good["sequence_id"] = rng.choice([17, 1.5, True, [], {}])
            return self.dump(good)
        if k == "long-email":
            good["data"]["email"] = rng.choice([rand_text(rng, rng.randint(250, 600)), " " * rng.randint(240, 260) + self.ctx.primary[0]])
            return self.dump(good)
        if k == "password-size":
            unit = rng.choice(["a", "é", "中", "\U0001F600"])
            target = rng.choice([1023, 1024, 1025, 1026, 2000])
            good["data"]["password"] = unit * (target // len(unit.encode())) + "b" * (target % len(unit.encode()))
            return self.dump(good)
        if k == "numbers":
            good[rng.choice(["x", "sequence_id", "data", "type"])] = None
            text = self.dump(good)
            lit = rng.choice(["1e400", "-1e400", "1e-400", "123456789012345678901234567890", "9" * 400, "-0", "0.0000001", "1E+2", "2e308"])
            return text[:-1] + (", " if len(good) else "") + f'"num":{lit}' + "}"
        if k == "deep":
            depth = rng.randint(10, max(11, min(6000, self.ctx.max_frame // 2 - 200)))
            o, c = rng.choice([("[", "]"), ('{"a":', "}")])
            text = self.dump(good)
            return text[:-1] + ',"deep":' + o * depth + "1" + c * depth + "}"
        if k == "dup-keys":
            a, b = rng.sample(["LOGIN_CUSTOMER", "OTHER", "", "LOGIN_CUSTOMER"], 2)
            return f'{{"type":{json.dumps(a)},"sequence_id":{json.dumps(seq)},"type":{json.dumps(b)},' \
                   f'"data":{json.dumps(good["data"])},"sequence_id":{json.dumps(seq + "-2")}}}'
        if k == "bom":
            return "\ufeff" + self.dump(good)
        if k == "whitespace":
            ws = lambda: "".join(rng.choice(" \t\r\n") for _ in range(rng.randint(0, 5)))
            return ws() + self.dump(good) + ws()
        if k == "escapes":
            text = self.dump(good)
            return text.replace('"type"', '"\\u0074ype"').replace('"data"', '"d\\u0061ta"').replace("LOGIN", "\\u004cOGIN")
        if k == "top-level":
            return rng.choice(["[]", "[{}]", "null", "true", "0", '"LOGIN_CUSTOMER"', "1e5", '"' + "a" * 100 + '"', json.dumps([good])])
        if k == "empty":
            return rng.choice(["", " ", "{}", "{ }", "\n"])
        if k == "truncated":
            text = self.dump(good)
            return text[: rng.randint(0, len(text) - 1)]
        if k == "trailing":
            return self.dump(good) + rng.choice(["x", "}", "{}", ",", "\u0000", " //", "]"])
        if k == "json-syntax":
            return rng.choice(["{'type':'LOGIN_CUSTOMER'}", '{"type":LOGIN_CUSTOMER}', '{"type":"LOGIN_CUSTOMER",}',
                               '{"type":"x" "sequence_id":"y"}', '{"a":NaN}', '{"a":Infinity}', '{"a":01}', '{"a":.5}',
                               '{"a":"\\x41"}', '{"a":"\\ud800"}', '{"a":"\\udc00\\ud800"}', '{"a":"\t"}', '{"a":tru}',
                               '{"type":"LOGIN_CUSTOMER","sequence_id":"\\ud83d\\ude00"}', '/* */{}', '{"a":1}}'])
        if k == "extra":
            good["extra"] = rng.choice(odd)
            good["data"]["extra"] = rng.choice(odd)
            return self.dump(good)
        if k == "random":
            return rand_text(rng, rng.randint(0, 200))
        raise AssertionError(k)

    def message(self):
        r = self.rng.random()
        return self.login() if r < 0.45 else self.garbage()


GARBAGE_KINDS = ["wrong-type", "missing", "unknown-type", "long-type", "long-email", "password-size", "numbers", "deep",
                 "dup-keys", "bom", "whitespace", "escapes", "top-level", "empty", "truncated", "trailing", "json-syntax",
                 "extra", "random"]


def mutate_bytes(rng, data):
    """Bit-level damage: mostly leaves invalid UTF-8 behind."""
    b = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        choice = rng.random()
        pos = rng.randint(0, len(b)) if b else 0
        if choice < 0.35:
            b[pos:pos] = rng.choice([b"\xff", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x82", b"\x80", b"\xf8\x88\x80\x80\x80", b"\xfe"])
        elif choice < 0.6 and b:
            b[min(pos, len(b) - 1)] ^= 1 << rng.randint(0, 7)
        elif choice < 0.8 and b:
            del b[min(pos, len(b) - 1)]
        else:
            b += "é".encode()[:1]   # a truncated two-byte sequence at the end
    return bytes(b)


def split_fragments(rng, op, payload, pings=True):
    """A valid fragmented message, maybe with control frames in between."""
    k = rng.randint(2, 6)
    cuts = sorted(rng.randint(0, len(payload)) for _ in range(k - 1))
    parts, prev = [], 0
    for c in cuts + [len(payload)]:
        parts.append(payload[prev:c])
        prev = c
    frames = []
    for i, p in enumerate(parts):
        frames.append(Frame(op if i == 0 else 0, p, fin=(i == len(parts) - 1)))
        if pings and i < len(parts) - 1 and rng.random() < 0.3:
            frames.append(rng.choice([Frame(9, rng.randbytes(rng.randint(0, 20))), Frame(10, b"unsolicited"), Frame(9, b"")]))
    return frames


# ----------------------------------------------------------------------------- cases

class Case:
    def __init__(self, no, category, what):
        self.no, self.category, self.what = no, category, what
        self.failures = []   # (rule, message)
        self.trace = None
        self.seconds = 0.0

    def fail(self, rule, msg):
        self.failures.append((rule, msg))


async def run_frames(case, args, ctx, rng, frames, chunking="whole", conn=None, send_after_fatal=True):
    """Open a connection (unless given), send frames, check everything the server does."""
    seen_uuids = args.seen_uuids
    m = model_frames(frames, ctx)
    if case.trace is not None:
        case.trace.append("frames: " + " | ".join(f.describe() for f in frames))
        case.trace.append(f"model: answers={[e.alts for e in m.answers]} pongs={len(m.pongs)} fatal={m.fatal} close={m.client_close} may_close={m.may_close}")
    own = conn is None
    if own:
        conn = Conn(args, case.trace)
        try:
            problem = await asyncio.wait_for(conn.open(args.timeout), args.timeout)
        except (asyncio.TimeoutError, ConnectionError, OSError) as e:
            problem = f"handshake: {e!r}"
        if problem:
            case.fail("rfc-handshake", problem)
            conn.abort()
            return
    to_send = frames
    if m.decoder_fatal:
        # The frame decoder fails at the header and the server closes at once: bytes still in
        # flight can turn its FIN into an RST that destroys the close frame in our buffer. So
        # only a frame sent header-only, with nothing after it, is held to the close frame.
        if not send_after_fatal:
            to_send = frames[: m.fatal_index + 1]
        m.reset_ok = not to_send[m.fatal_index].header_only or len(to_send) > m.fatal_index + 1
    if m.client_close is not None and len(to_send) > m.fatal_index + 1:
        # Bytes after our close frame reach a socket the server may already have closed.
        m.reset_ok = True
    stream = b"".join(f.encode(rng) for f in to_send)
    await conn.send_chunked(stream, rng, chunking)
    await finish(case, args, ctx, conn, m, seen_uuids)


async def finish(case, args, ctx, conn, m, seen_uuids):
    deadline = time.monotonic() + args.timeout
    required = len(m.answers)
    ends = m.fatal is not None or m.client_close is not None
    if not ends:
        def done():
            return len(conn.texts()) >= required and (not m.pongs or m.pongs[-1] in conn.pong_payloads()) or conn.closed_frame is not None
        await conn.wait_until(done, deadline)
        if conn.closed_frame is None:
            await conn.send(Frame(8, close_payload(1000)).encode(case.rng))
        expected_close = ({1000}, "rfc-close", "our close after the answers")
    else:
        expected_close = m.fatal or m.client_close
    got_close = await conn.wait_until(lambda: conn.closed_frame is not None, time.monotonic() + args.timeout)
    if got_close:
        code = conn.closed_frame[0]
        await conn.send(Frame(8, close_payload(code if code in VALID_CLOSE else 1000)).encode(case.rng))
    got_eof = conn.eof or (got_close and await conn.wait_until(lambda: conn.eof, time.monotonic() + args.timeout))
    conn.abort()
    evaluate(case, ctx, conn, m, expected_close, got_close, got_eof, seen_uuids)


def evaluate(case, ctx, conn, m, expected_close, got_close, got_eof, seen_uuids):
    for p in conn.problems:
        case.fail("data-after-close" if "after the server's close" in p else "server-frame", p)
    codes, rule, why = expected_close
    closed_early = conn.closed_frame is not None and conn.closed_frame[0] in m.may_close
    fatal = m.fatal is not None or closed_early
    received, objs = conn.texts(), []
    for raw in received:
        obj, problems = shape_problems(raw, ctx, seen_uuids)
        for p in problems:
            case.fail("doc-in-event-type-64" if "truncated to 64" in p else "gateway-protocol", f"{p}: {raw[:200]}")
        objs.append(obj if obj is not None else {})
    pairs, extra, missing = match_answers(m.answers, objs)
    pairs, extra, missing = explain_swaps(m.answers, objs, pairs, extra, missing)
    # A connection that must fail may lose answers to earlier requests; none may be wrong.
    optional = fatal or m.client_close is not None
    fatal_unhonoured = False
    if m.fatal is not None:
        code = conn.closed_frame[0] if conn.closed_frame else None
        if code not in codes:
            fatal_unhonoured = True
            if conn.closed_frame is None and m.reset_ok and ("reset",) in conn.events:
                fatal_unhonoured = False
            elif conn.closed_frame is None and m.reset_ok and got_eof:
                fatal_unhonoured = False
    for i in extra:
        obj = objs[i]
        if fatal_unhonoured:
            continue   # reported once below
        cand = [e for e in (m.answers[j] for j in missing) if any(s.seq == obj.get("sequence_id") for s in e.alts)]
        cand.sort(key=lambda e: e.rule in ("gateway-protocol", "gateway-login"))   # a specific rule explains more
        r = cand[0].rule if cand else (m.answers[missing[0]].rule if len(missing) == 1 else "gateway-protocol")
        want = cand[0].alts if cand else [m.answers[j].alts for j in missing][:3]
        case.fail(r, f"unexpected answer {received[i][:300]} (expected {want})")
    if not optional:
        for j in missing:
            e = m.answers[j]
            if extra and not fatal_unhonoured:
                continue   # already reported as a wrong answer
            case.fail(e.rule if got_close else "hang", f"no answer for {e.what} (expected one of {e.alts})")
        if m.pongs and m.pongs[-1] not in conn.pong_payloads():
            case.fail("rfc-ping-pong", f"no pong for ping {m.pongs[-1][:20]!r}")
    pongs = conn.pong_payloads()
    it = iter(m.pongs)
    if not fatal_unhonoured and not all(any(p == q for q in it) for p in pongs):
        case.fail("rfc-ping-pong", f"pongs {pongs} are not answers to pings {m.pongs} in order")
    if closed_early and m.fatal is None:
        return
    if conn.closed_frame is None:
        if m.fatal is not None and not fatal_unhonoured:
            return
        if m.client_close is not None and m.reset_ok and (("reset",) in conn.events or got_eof):
            return
        if m.fatal is not None:
            case.fail(rule, f"expected close {sorted(codes)} ({why}); got {'EOF' if got_eof else 'nothing'}, {len(received)} answers")
        else:
            case.fail("hang" if not got_eof else rule, f"no close frame for {why}; events {summarize(conn.events)}")
        return
    code, reason = conn.closed_frame
    if code not in codes:
        r = rule if m.fatal or m.client_close else "unexpected-close"
        case.fail(r, f"close {code} {reason!r}, expected {sorted(codes)} ({why})")
    if not got_eof:
        case.fail("hang", f"no TCP close within {case.args.timeout}s after the close handshake")


def summarize(events):
    c = collections.Counter(e[0] for e in events)
    return dict(c)


# --- categories

def case_json(case, args, ctx, rng):
    """One text frame (or a few) of generated JSON, sometimes fragmented."""
    g = Gen(rng, ctx, case.no)
    frames = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        text = g.message()
        payload = text.encode("utf-8", "surrogatepass")
        if len(payload) > ctx.max_frame:
            payload = payload[: ctx.max_frame]
        if rng.random() < 0.25 and payload:
            frames += split_fragments(rng, 1, payload)
        else:
            frames.append(Frame(1, payload))
    case.what = f"{len(frames)} frame(s): {frames[0].describe()}"
    return run_frames(case, args, ctx, rng, frames, chunking=rng.choice(["whole", "whole", "chunks", "tiny"]))


def case_utf8(case, args, ctx, rng):
    g = Gen(rng, ctx, case.no)
    payload = mutate_bytes(rng, g.message().encode("utf-8", "surrogatepass"))[: ctx.max_frame]
    frames = split_fragments(rng, 1, payload) if rng.random() < 0.3 else [Frame(1, payload)]
    if rng.random() < 0.3:
        frames = [Frame(1, g.login("valid").encode())] + frames + [Frame(1, g.login().encode())]
    case.what = f"damaged bytes: {Frame(1, payload).describe()}"
    return run_frames(case, args, ctx, rng, frames)


def case_binary(case, args, ctx, rng):
    g = Gen(rng, ctx, case.no)
    payload = rng.choice([b"", rng.randbytes(rng.randint(1, 300)), g.login("valid").encode(), b"\xff\xfe\x00"])
    frames = split_fragments(rng, 2, payload) if rng.random() < 0.3 and payload else [Frame(2, payload)]
    if rng.random() < 0.5:
        frames.append(Frame(1, g.login().encode()))
    case.what = f"binary {len(payload)}B in {len(frames)} frame(s)"
    return run_frames(case, args, ctx, rng, frames)


def case_oversize(case, args, ctx, rng):
    g = Gen(rng, ctx, case.no)
    mx = ctx.max_frame
    kind = rng.choice(["over-header", "over-header", "over-full", "claim63", "claim64", "claim-huge", "exact", "exact-fragmented",
                       "fragmented-over", "ping-over", "just-under"])
    lead = [Frame(1, g.login().encode())] if rng.random() < 0.4 else []
    if kind == "over-header":
        n = mx + rng.choice([1, 2, 100, mx, 1 << 20])
        frames = lead + [Frame(rng.choice([1, 2]), b"", length=n, header_only=True)]
    elif kind == "over-full":
        frames = lead + [Frame(1, b" " * (mx + rng.randint(1, 64)))]
    elif kind == "claim63":
        frames = lead + [Frame(1, b"", length=1 << 63, header_only=True, form=64)]
    elif kind == "claim64":
        frames = lead + [Frame(1, b"", length=(1 << 64) - 1, header_only=True, form=64)]
    elif kind == "claim-huge":
        frames = lead + [Frame(rng.choice([0, 1, 2, 9]), b"", length=rng.choice([(1 << 63) - 1, 1 << 32, 1 << 40]), header_only=True, form=64, fin=True)]
        if frames[-1].op == 0:
            frames[-1:] = [Frame(1, b"{", fin=False), frames[-1]]
    elif kind in ("exact", "just-under", "exact-fragmented"):
        text = g.login()
        size = mx if kind != "just-under" else mx - 1
        body = text[:-1] + " " * (size - len(text.encode())) + "}"
        frames = lead + (split_fragments(rng, 1, body.encode()) if kind == "exact-fragmented" else [Frame(1, body.encode())])
    elif kind == "fragmented-over":
        half = mx // 2 + 1
        frames = lead + [Frame(1, b" " * half, fin=False), Frame(0, b" " * half, fin=False), Frame(0, b"{}")]
    else:  # ping over 125
        frames = lead + [Frame(9, rng.randbytes(rng.choice([126, 200, 1000])), header_only=rng.random() < 0.7)]
    case.what = f"oversize/{kind}"
    return run_frames(case, args, ctx, rng, frames, send_after_fatal=False)


def case_fragment(case, args, ctx, rng):
    g = Gen(rng, ctx, case.no)
    text = g.message().encode("utf-8", "surrogatepass")[: ctx.max_frame]
    kind = rng.choice(["valid", "valid", "split-utf8", "cont-no-start", "text-mid", "binary-mid", "fragmented-ping",
                       "close-mid", "empty-fragments", "two-messages"])
    if kind == "valid":
        frames = split_fragments(rng, 1, text)
    elif kind == "split-utf8":
        body = json.dumps({"type": "LOGIN_CUSTOMER", "sequence_id": "é中\U0001F600" + g.seq(), "data": {"email": ctx.primary[0], "password": ctx.primary[1]}}, ensure_ascii=False).encode()
        cut = body.index("中".encode()) + 1
        frames = [Frame(1, body[:cut], fin=False), Frame(9, b"mid"), Frame(0, body[cut:])]
    elif kind == "cont-no-start":
        frames = [Frame(0, text, fin=rng.random() < 0.5)]
    elif kind == "text-mid":
        frames = [Frame(1, text[:3], fin=False), Frame(1, text[3:])]
    elif kind == "binary-mid":
        frames = [Frame(1, text[:3], fin=False), Frame(2, b"\x00"), Frame(0, text[3:])]
    elif kind == "fragmented-ping":
        frames = [Frame(9, b"a", fin=False), Frame(0, b"b")]
    elif kind == "close-mid":
        frames = [Frame(1, text[:5], fin=False), Frame(8, close_payload(1000))]
    elif kind == "empty-fragments":
        frames = [Frame(1, b"", fin=False), Frame(0, b"", fin=False), Frame(0, text)]
    else:
        frames = split_fragments(rng, 1, text) + split_fragments(rng, 1, g.login().encode())
    if rng.random() < 0.3:
        frames = [Frame(1, g.login().encode())] + frames
    case.what = f"fragment/{kind}"
    return run_frames(case, args, ctx, rng, frames, chunking=rng.choice(["whole", "chunks", "tiny"]))


def case_protocol(case, args, ctx, rng):
    g = Gen(rng, ctx, case.no)
    login = g.login().encode()
    kind = rng.choice(["unmasked", "rsv-data", "rsv-control", "reserved-opcode", "close-code", "close-code", "close-reason",
                       "close-short", "ping", "ping", "pong", "nonminimal", "zero-mask", "empty-text", "text-after-close"])
    if kind == "unmasked":
        frames = [Frame(rng.choice([1, 1, 2, 9, 8]), login if rng.random() < 0.7 else b"", mask=False)]
    elif kind == "rsv-data":
        frames = [Frame(rng.choice([1, 2]), login, rsv=rng.randint(1, 7))]
    elif kind == "rsv-control":
        op = rng.choice([9, 10, 8])
        frames = [Frame(op, close_payload(1000) if op == 8 else b"rsv", rsv=rng.randint(1, 7))]
    elif kind == "reserved-opcode":
        frames = [Frame(rng.choice([3, 4, 5, 6, 7, 11, 12, 13, 14, 15]), rng.choice([b"", b"x" * 10, login[:100]]))]
    elif kind == "close-code":
        code = rng.choice([0, 999, 1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014,
                           1015, 1016, 1100, 2000, 2999, 3000, 3999, 4000, 4999, 5000, 65535])
        frames = [Frame(8, close_payload(code, rng.choice([b"", b"bye", "пока".encode()])))]
    elif kind == "close-reason":
        frames = [Frame(8, close_payload(1000, rng.choice([b"\xff", b"ok\xc0\xaf", b"\xed\xa0\x80", "x".encode() * 123])))]
    elif kind == "close-short":
        frames = [Frame(8, rng.choice([b"\x03", b""]))]
    elif kind == "ping":
        frames = [Frame(9, rng.randbytes(rng.choice([0, 1, 16, 125])))] * rng.randint(1, 5)
    elif kind == "pong":
        frames = [Frame(10, rng.randbytes(rng.randint(0, 125)))]
    elif kind == "nonminimal":
        frames = [Frame(1, login[:120] if rng.random() < 0.5 else login, form=rng.choice([16, 64]))]
    elif kind == "zero-mask":
        frames = [Frame(1, login, key=b"\x00\x00\x00\x00")]
    elif kind == "empty-text":
        frames = [Frame(1, b"")]
    else:
        frames = [Frame(8, close_payload(1000)), Frame(1, login)]
    if rng.random() < 0.4:
        frames = [Frame(1, g.login().encode())] + frames
    if rng.random() < 0.3:
        frames = frames + [Frame(1, g.login().encode())]
    case.what = f"protocol/{kind}"
    return run_frames(case, args, ctx, rng, frames, chunking=rng.choice(["whole", "chunks"]))


def pipeline_frames(g, rng, ctx, n):
    frames = []
    for _ in range(n):
        r = rng.random()
        if r < 0.5:
            frames.append(Frame(1, g.login().encode()))
        elif r < 0.8:
            frames.append(Frame(1, g.garbage().encode("utf-8", "surrogatepass")[: ctx.max_frame]))
        elif r < 0.85:
            frames.append(Frame(2, rng.randbytes(rng.randint(0, 40))))
        elif r < 0.92:
            frames.append(Frame(9, rng.randbytes(rng.randint(0, 30))))
        else:
            frames += split_fragments(rng, 1, g.login().encode())
    return frames


def case_pipeline(case, args, ctx, rng):
    g = Gen(rng, ctx, case.no)
    n = rng.choice([5, 10, 20, 40, 70, 100, 150])
    frames = pipeline_frames(g, rng, ctx, n)
    tail = rng.random()
    if tail < 0.15:
        frames.append(Frame(1, b"\xff"))                  # ends in 1007
    elif tail < 0.25:
        frames.append(Frame(0, b"x"))                     # ends in 1002
    elif tail < 0.35:
        frames.append(Frame(8, close_payload(1000)))      # ends in our close
    case.what = f"pipeline of {len(frames)} frames"
    return run_frames(case, args, ctx, rng, frames, chunking=rng.choice(["whole", "chunks"]))


async def case_multi(case, args, ctx, rng):
    """Several connections at once, their bytes interleaved."""
    k = rng.randint(2, 6)
    g = Gen(rng, ctx, case.no)
    conns, streams, models = [], [], []
    case.what = f"{k} connections interleaved"
    for _ in range(k):
        c = Conn(args, case.trace)
        try:
            problem = await asyncio.wait_for(c.open(args.timeout), args.timeout)
        except (asyncio.TimeoutError, OSError) as e:
            problem = repr(e)
        if problem:
            case.fail("rfc-handshake", problem)
            c.abort()
            for o in conns:
                o.abort()
            return
        frames = pipeline_frames(g, rng, ctx, rng.randint(1, 12))
        m = model_frames(frames, ctx)
        conns.append(c)
        models.append(m)
        streams.append(bytearray(b"".join(f.encode(rng) for f in frames)))
    for c in conns:
        await c.send_lock.acquire()
    try:
        while any(streams):
            i = rng.choice([i for i, s in enumerate(streams) if s])
            n = rng.randint(1, len(streams[i]))
            await conns[i].send(bytes(streams[i][:n]))
            del streams[i][:n]
            if rng.random() < 0.2:
                await asyncio.sleep(0)
    finally:
        for c in conns:
            c.send_lock.release()
    await asyncio.gather(*(finish(case, args, ctx, c, m, args.seen_uuids) for c, m in zip(conns, models)))


async def case_abrupt(case, args, ctx, rng):
    """The peer vanishes: half a handshake, half a frame, requests never read, RST."""
    g = Gen(rng, ctx, case.no)
    kind = rng.choice(["half-handshake", "half-frame", "half-frame-rst", "no-read", "close-then-rst", "after-handshake"])
    case.what = f"abrupt/{kind}"
    c = Conn(args, case.trace)
    try:
        if kind == "half-handshake":
            await c.connect()
            hs = c.handshake_bytes()
            await c.send(hs[: rng.randint(0, len(hs) - 1)])
            await asyncio.sleep(rng.choice([0, 0.01, 0.1]))
            c.reset() if rng.random() < 0.5 else c.abort()
            return
        problem = await asyncio.wait_for(c.open(args.timeout), args.timeout)
        if problem:
            case.fail("rfc-handshake", problem)
            return
        if kind in ("half-frame", "half-frame-rst"):
            data = Frame(1, g.login().encode()).encode(rng)
            await c.send(data[: rng.randint(1, len(data) - 1)])
        elif kind == "no-read":
            c.task.cancel()
            await c.send(b"".join(f.encode(rng) for f in pipeline_frames(g, rng, ctx, rng.randint(5, 60))))
        elif kind == "close-then-rst":
            await c.send(Frame(8, close_payload(1000)).encode(rng))
        await asyncio.sleep(rng.choice([0, 0.005, 0.05]))
        c.reset() if kind.endswith("rst") or rng.random() < 0.3 else c.abort()
    except (asyncio.TimeoutError, OSError) as e:
        case.fail("hang", f"{kind}: {e!r}")
    finally:
        c.abort()


async def case_slow(case, args, ctx, rng):
    """Slowloris: a request dribbled out byte by byte is still answered; a stalled one is closed
    by the idle timeout."""
    g = Gen(rng, ctx, case.no)
    stall = ctx.idle_timeout and rng.random() < 0.25
    if not stall:
        frames = [Frame(1, g.login().encode())]
        case.what = "slow/dribble"
        c = Conn(args, case.trace)
        problem = await asyncio.wait_for(c.open(args.timeout), args.timeout)
        if problem:
            case.fail("rfc-handshake", problem)
            c.abort()
            return
        data = b"".join(f.encode(rng) for f in frames)
        per = min(0.02, 0.8 / max(1, len(data)))
        async with c.send_lock:
            for b in data:
                await c.send(bytes([b]))
                await asyncio.sleep(per)
        await finish(case, args, ctx, c, model_frames(frames, ctx), args.seen_uuids)
        return
    case.what = "slow/stall"
    c = Conn(args, case.trace)
    problem = await asyncio.wait_for(c.open(args.timeout), args.timeout)
    if problem:
        case.fail("rfc-handshake", problem)
        c.abort()
        return
    data = Frame(1, g.login().encode()).encode(rng)
    # No pongs while stalled (one would complete the frame): the server's ping timeout may
    # close it first, also with 1001.
    async with c.send_lock:
        await c.send(data[: rng.randint(0, len(data) - 1)])
        got = await c.wait_until(lambda: c.closed_frame is not None, time.monotonic() + ctx.idle_timeout + args.timeout)
    if not got:
        case.fail("doc-idle-timeout", f"no close {ctx.idle_timeout + args.timeout}s after a stalled frame; events {summarize(c.events)}")
    elif c.closed_frame[0] != 1001:
        case.fail("doc-idle-timeout", f"stalled connection closed with {c.closed_frame}, expected 1001")
    c.abort()


async def case_handshake(case, args, ctx, rng):
    kind = rng.choice(["valid-variant", "valid-variant", "version", "no-key", "bad-key", "http10", "no-connection",
                       "wrong-path", "post", "garbage", "huge-header"])
    case.what = f"handshake/{kind}"
    c = Conn(args, case.trace)
    await c.connect()
    try:
        if kind == "valid-variant":
            extra = rng.choice(["", "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n",
                                "Sec-WebSocket-Protocol: chat, superchat\r\n", "Origin: http://evil.example\r\n",
                                "X-Forwarded-For: 10.0.0.1\r\n", "Cookie: a=b\r\n"])
            hs = c.handshake_bytes(extra=extra, upgrade=rng.choice(["websocket", "WebSocket"]),
                                   connection=rng.choice(["Upgrade", "upgrade", "keep-alive, Upgrade"]),
                                   path=rng.choice([PATH, PATH + "?x=1"]))
            await c.send_chunked(hs, rng, rng.choice(["whole", "tiny"]))
            head = await c.read_head(args.timeout)
            problem = "no answer" if head is None else check_upgrade(head, c.key)
            if problem:
                case.fail("rfc-handshake", problem)
                return
            c.task = asyncio.ensure_future(c.read_loop())
            g = Gen(rng, ctx, case.no)
            frames = [Frame(1, g.login("valid").encode())]
            await c.send(frames[0].encode(rng))
            await finish(case, args, ctx, c, model_frames(frames, ctx), args.seen_uuids)
            return
        if kind == "garbage":
            data = rng.choice([b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + rng.randbytes(40), b"G\x00T / HTTP/1.1\r\n\r\n",
                               b"GET / HTTP/9.9\r\nHost: x\r\n\r\n", rng.randbytes(64) + b"\r\n\r\n"])
        elif kind == "huge-header":
            data = c.handshake_bytes(extra="X-Big: " + "a" * 100_000 + "\r\n")
        elif kind == "version":
            data = c.handshake_bytes(version=rng.choice(["8", "12", "14", "", None]))
        elif kind == "no-key":
            data = c.handshake_bytes(key="")
        elif kind == "bad-key":
            data = c.handshake_bytes(key=rng.choice(["abc", "x" * 24, base64.b64encode(rng.randbytes(15)).decode()]))
        elif kind == "http10":
            data = c.handshake_bytes(proto="HTTP/1.0")
        elif kind == "no-connection":
            data = c.handshake_bytes(connection=None)
        elif kind == "wrong-path":
            data = c.handshake_bytes(path=rng.choice(["/customer-gateway", "/customer-gateway/customer/x", "/CUSTOMER-GATEWAY/CUSTOMER"]))
        else:
            data = c.handshake_bytes().replace(b"GET ", b"POST ", 1)
        await c.send(data)
        try:
            head = await asyncio.wait_for(c.reader.read(4096), args.timeout)
        except asyncio.TimeoutError:
            rule = "http-invalid-request" if kind in ("garbage", "huge-header") else "rfc-handshake-validation"
            case.fail(rule, f"{kind}: no answer and no close within {args.timeout}s")
            return
        except (ConnectionError, OSError):
            return   # closed: an acceptable refusal
        status = head.split(b"\r\n", 1)[0].decode("latin-1")
        if head and " 101 " in status + " ":
            case.fail("rfc-handshake-validation", f"{kind}: invalid handshake was upgraded: {status!r}")
        elif head and re.match(r"HTTP/1\.[01] 5\d\d", status):
            case.fail("rfc-handshake-validation", f"{kind}: server error {status!r}")
    finally:
        c.abort()


CATEGORIES = {
    # name: (weight, generator)
    "json": (26, case_json),
    "utf8": (7, case_utf8),
    "binary": (5, case_binary),
    "oversize": (8, case_oversize),
    "fragment": (12, case_fragment),
    "protocol": (15, case_protocol),
    "pipeline": (8, case_pipeline),
    "multi": (5, case_multi),
    "abrupt": (6, case_abrupt),
    "slow": (2, case_slow),
    "handshake": (6, case_handshake),
}


def plan(seed, n, only_categories):
    names = [c for c in CATEGORIES if not only_categories or c in only_categories]
    weights = [CATEGORIES[c][0] for c in names]
    rng = random.Random(f"plan/{seed}")
    return [rng.choices(names, weights)[0] for _ in range(n)]


async def run_case(no, category, args, ctx, trace=False):
    rng = random.Random(f"{args.seed}/{no}")
    case = Case(no, category, "")
    case.rng = rng
    case.args = args
    if trace:
        case.trace = []
    t0 = time.monotonic()
    try:
        res = CATEGORIES[category][1](case, args, ctx, rng)
        await asyncio.wait_for(res, args.timeout * 4 + (ctx.idle_timeout or 0) + 5)
    except asyncio.TimeoutError:
        case.fail("hang", f"case did not finish within {args.timeout * 4 + (ctx.idle_timeout or 0) + 5:.0f}s")
    except (ConnectionError, OSError) as e:
        case.fail("hang" if isinstance(e, ConnectionRefusedError) else "unexpected-close", f"{e!r}")
    case.seconds = time.monotonic() - t0
    return case


# ----------------------------------------------------------------------------- health / final login

async def http_get(args, path, headers=None, timeout=5.0):
    r, w = await asyncio.wait_for(asyncio.open_connection(args.host, args.port), timeout)
    try:
        h = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        w.write(f"GET {path} HTTP/1.1\r\nHost: {args.host}\r\nConnection: close\r\n{h}\r\n".encode())
        await w.drain()
        data = await asyncio.wait_for(r.read(), timeout)
        return int(data.split(b" ", 2)[1]), data
    finally:
        w.close()


async def health(args):
    try:
        status, _ = await http_get(args, "/health")
        return status == 200, f"/health answered {status}"
    except (OSError, asyncio.TimeoutError, IndexError, ValueError) as e:
        return False, f"/health: {e!r}"


async def final_login(args, ctx):
    conn = Conn(args)
    problem = await asyncio.wait_for(conn.open(args.timeout), args.timeout)
    if problem:
        return problem
    seq = "final-" + str(uuid.uuid4())
    await conn.send(Frame(1, json.dumps({"type": "LOGIN_CUSTOMER", "sequence_id": seq,
                                         "data": {"email": args.email, "password": args.password}}).encode()).encode(random))
    await conn.wait_until(lambda: conn.texts(), time.monotonic() + args.timeout)
    texts = conn.texts()
    await conn.send(Frame(8, close_payload(1000)).encode(random))
    conn.abort()
    if not texts:
        return "no answer to the final login"
    obj = json.loads(texts[0])
    if obj.get("type") != "CUSTOMER_API_TOKEN" or obj.get("sequence_id") != seq:
        return f"final login answered {texts[0][:300]}"
    status, body = await http_get(args, "/api/users/user", {"Authorization": "Bearer " + obj["data"]["api_token"]})
    if status != 200:
        return f"GET /api/users/user with the gateway token answered {status}"
    return None


# ----------------------------------------------------------------------------- main

async def main_async(args):
    ctx = Ctx(args)
    args.seen_uuids = set()
    only = set(args.categories.split(",")) if args.categories else None
    cats = plan(args.seed, args.cases, only)
    xfail = set()
    for x in filter(None, args.xfail.split(",")):
        if x not in RULES and x not in XFAIL_ALIASES:
            raise SystemExit(f"--xfail: unknown rule {x!r} (see --list-rules)")
        xfail.update(XFAIL_ALIASES.get(x, [x]))
    if args.only is not None:
        case = await run_case(args.only, cats[args.only] if args.only < len(cats) else plan(args.seed, args.only + 1, only)[args.only], args, ctx, trace=True)
        print(f"case {case.no} [{case.category}] {case.what}")
        for line in case.trace or []:
            print("  " + line)
        for rule, msg in case.failures:
            print(f"  FAIL {rule}: {msg}")
        print("  PASS" if not case.failures else "")
        return 1 if case.failures else 0

    t0 = time.monotonic()
    results = []
    sem = asyncio.Semaphore(args.concurrency)
    health_failures = []

    async def one(no, cat):
        async with sem:
            return await run_case(no, cat, args, ctx)

    for start in range(0, len(cats), args.batch):
        batch = [one(no, cats[no]) for no in range(start, min(len(cats), start + args.batch))]
        results += await asyncio.gather(*batch)
        ok, msg = await health(args)
        if not ok:
            health_failures.append(f"after case {start + len(batch) - 1}: {msg}")
            await asyncio.sleep(1)
            ok2, msg2 = await health(args)
            if not ok2:
                print(f"server is down ({msg2}); stopping", file=sys.stderr)
                break
        failed = sum(1 for c in results if c.failures and not {r for r, _ in c.failures} <= xfail)
        print(f"  {len(results)}/{len(cats)} cases, {failed} failing, {time.monotonic() - t0:.1f}s", file=sys.stderr, flush=True)

    final = None
    if not health_failures or len(results) == len(cats):
        try:
            final = await final_login(args, ctx)
        except (OSError, asyncio.TimeoutError, ValueError) as e:
            final = repr(e)
    elapsed = time.monotonic() - t0

    by_cat = collections.defaultdict(lambda: [0, 0, 0])
    by_rule = collections.Counter()
    first = {}
    for c in results:
        rules = {r for r, _ in c.failures}
        status = 0 if not rules else (2 if rules <= xfail else 1)
        by_cat[c.category][status] += 1
        for r in rules:
            by_rule[r] += 1
            first.setdefault(r, []).append(c)
    n_fail = sum(v[1] for v in by_cat.values())
    n_xfail = sum(v[2] for v in by_cat.values())
    print(f"\nWebSocket fuzz: seed {args.seed}, {len(results)} cases, {elapsed:.1f}s, concurrency {args.concurrency}, "
          f"max frame {ctx.max_frame}")
    print(f"{'category':<10} {'cases':>6} {'pass':>6} {'fail':>6} {'xfail':>6}")
    for cat in CATEGORIES:
        if cat in by_cat:
            p, f, x = by_cat[cat]
            print(f"{cat:<10} {p + f + x:>6} {p:>6} {f:>6} {x:>6}")
    if by_rule:
        print("\nfailing cases by rule (a case can break several):")
        for r, n in by_rule.most_common():
            tag = " (xfail)" if r in xfail else ""
            print(f"  {r:<26} {n:>5}{tag}  {RULES.get(r, '')}")
            for c in first[r][: args.show]:
                msg = next(m for rr, m in c.failures if rr == r)
                print(f"      case {c.no} [{c.category}] {c.what[:90]}\n        {msg[:400]}")
            if len(first[r]) > args.show:
                print(f"      … {len(first[r]) - args.show} more; re-run one with --seed {args.seed} --only N")
    for h in health_failures:
        print(f"HEALTH: {h}")
    if final:
        print(f"FINAL LOGIN: {final}")
    else:
        print("final LOGIN_CUSTOMER: token issued and accepted by GET /api/users/user")
    print(f"\nresult: {len(results) - n_fail - n_xfail} passed, {n_fail} failed, {n_xfail} xfailed"
          f"{', server unhealthy' if health_failures else ''}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"seed": args.seed, "cases": len(results), "seconds": round(elapsed, 1), "failed": n_fail,
                       "xfailed": n_xfail, "by_rule": dict(by_rule), "health": health_failures, "final": final,
                       "by_category": {k: dict(zip(["pass", "fail", "xfail"], v)) for k, v in by_cat.items()},
                       "failures": [{"case": c.no, "category": c.category, "what": c.what, "failures": c.failures}
                                    for c in results if c.failures]}, fh, indent=1)
    return 1 if n_fail or health_failures or final or len(results) < len(cats) else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=19300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cases", type=int, default=500)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--batch", type=int, default=200, help="cases between /health checks")
    ap.add_argument("--timeout", type=float, default=4.0, help="seconds the server has to answer or close")
    ap.add_argument("--email", default="fuzz@example.com")
    ap.add_argument("--password", default="fuzz-pass-1")
    ap.add_argument("--tag", default="", help="the account's tag, for the '@tag' cases")
    ap.add_argument("--email72", default="", help="an account whose password is exactly 72 bytes")
    ap.add_argument("--password72", default="")
    ap.add_argument("--max-frame-bytes", type=int, default=16384, help="the server's GATEHOUSE_WS_MAX_FRAME_BYTES")
    ap.add_argument("--idle-timeout", type=float, default=0, help="the server's GATEHOUSE_WS_IDLE_TIMEOUT_SECONDS (0: skip stall cases)")
    ap.add_argument("--session-ttl", type=float, default=86400)
    ap.add_argument("--account-failure-limit", type=int, default=10000, help="the server's GATEHOUSE_LOGIN_FAILURES_PER_ACCOUNT")
    ap.add_argument("--categories", default="", help="comma-separated subset of: " + ",".join(CATEGORIES))
    ap.add_argument("--xfail", default="", help="comma-separated rule ids whose failures are expected; "
                    "'known' = every finding open when this was written, 'upstream' = the library ones")
    ap.add_argument("--only", type=int, help="run only case N of the seed, with a frame trace")
    ap.add_argument("--show", type=int, default=3, help="example cases printed per failing rule")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--list-rules", action="store_true")
    args = ap.parse_args()
    if args.list_rules:
        for k, v in RULES.items():
            tag = " [known: upstream]" if k in UPSTREAM_FINDINGS else " [known]" if k in KNOWN_FINDINGS else ""
            print(f"{k:<26} {v}{tag}")
        return 0
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    sys.exit(main())
