#!/usr/bin/env python3
"""WebSocket fuzzer for the messenger's realtime socket (`ws://HOST:PORT/v1/realtime`).

Standard library only; it borrows the raw RFC 6455 client of Fuzz/websocket.py (`Conn`,
`Frame`), so it can send what no library would. Every case is generated from `--seed` and its
index, runs on its own connection, and is checked against docs/messenger.md ("Realtime"):

  * authentication: a good token (header, or the first frame, whole or fragmented with pings
    between) is answered `ready`; a bad token, a first frame that is not `auth`, or a binary
    first frame closes with 4001; `?since=` past the newest event adds `resync`;
  * after `ready`, every text or binary message gets one `error` frame (`unexpected_frame`),
    pings get their pongs, and frames that break RFC 6455 close with 1002, 1007 or 1009;
  * events the case makes happen (messages sent to the account over `/v1`, between the client's
    frames) arrive as `message.created`, and every event frame's `seq` is the one before plus 1;
  * every server frame is well-formed JSON of a documented type; nothing hangs past `--timeout`.

  python3 Fuzz/realtime.py --port P --token T --partner-token U --chat C --cases 300 --seed 1
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from websocket import Conn, Frame, close_payload  # noqa: E402  (the gateway fuzzer's raw client)

PATH = "/v1/realtime"
EVENT_TYPES = {"message.created", "message.updated", "message.deleted", "chat.read", "chat.deleted",
               "friend.requested", "friend.accepted", "friend.removed", "profile.updated"}
CATEGORIES = ["auth-header", "auth-frame", "auth-bad", "live-noise", "protocol", "close"]


class Case:
    def __init__(self, no, category):
        self.no, self.category, self.failures = no, category, []

    def fail(self, message):
        self.failures.append(message)


def send_message(args, text):
    """The partner writes to the fuzzed account over /v1 (an event for its socket)."""
    body = json.dumps({"text": text, "clientMessageId": os.urandom(8).hex()}).encode()
    request = urllib.request.Request(f"http://{args.host}:{args.port}/v1/chats/{args.chat}/messages", data=body, method="POST",
                                     headers={"Authorization": f"Bearer {args.partner_token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        assert answer.status == 201


def frames_of(conn, case):
    """The server's text frames as JSON, each checked for its shape."""
    parsed = []
    for text in conn.texts():
        try:
            frame = json.loads(text)
        except ValueError:
            case.fail(f"not JSON: {text[:80]!r}")
            continue
        kind = frame.get("type")
        if kind in ("ready", "resync"):
            if not isinstance(frame.get("seq"), int) or set(frame) != {"type", "seq"}:
                case.fail(f"bad {kind} frame {text[:120]}")
        elif kind == "error":
            if set(frame) != {"type", "code", "message"} or frame["code"] != "unexpected_frame":
                case.fail(f"bad error frame {text[:120]}")
        elif kind in EVENT_TYPES:
            if set(frame) != {"type", "seq", "data"} or not isinstance(frame["seq"], int) or not isinstance(frame["data"], dict):
                case.fail(f"bad event frame {text[:120]}")
        else:
            case.fail(f"unknown frame type {kind!r}")
        parsed.append(frame)
    return parsed


def check_sequence(case, frames, since):
    """Events follow `since` (a resume) or, without one or after a resync, the ready frame's seq."""
    ready = next((f for f in frames if f.get("type") == "ready"), None)
    resync = next((f for f in frames if f.get("type") == "resync"), None)
    last = (resync or ready or {}).get("seq")
    if resync is None and ready is not None and isinstance(since, int) and 0 <= since <= ready["seq"]:
        last = since
    for frame in frames:
        if frame.get("type") in EVENT_TYPES:
            if last is None:
                case.fail("an event before ready")
            elif frame["seq"] != last + 1:
                case.fail(f"seq {frame['seq']} after {last}: a gap or a repeat")
            last = frame["seq"]


def garbage_text(rng):
    return rng.choice([
        "", "{}", "null", "[]", '{"type":"auth"}', '{"type":"ping"}', '{"type":"auth","token":5}', '{"type":"ready","seq":1}',
        "x" * rng.randint(1, 300), json.dumps({"type": "auth", "token": "t" * rng.randint(1, 600)}), '{"type":"auth","token":"',
        "\u0000\u0001", "ё" * rng.randint(1, 100), '{"type":"auth","token":"a","extra":[1,2,3]}',
    ])


async def wait_closed(conn, deadline):
    await conn.wait_until(lambda: conn.eof or conn.closed_frame is not None, deadline)
    return conn.closed_frame[0] if conn.closed_frame else None


async def run_case(args, no):
    rng = random.Random(f"{args.seed}:{no}")
    case = Case(no, rng.choice(args.categories))
    conn = Conn(args)
    deadline = time.monotonic() + args.timeout
    since = rng.choice([None, None, 0, 1, 10 ** 12, -1, "abc"])
    path = PATH + ("" if since is None else f"?since={since}")
    header = case.category in ("auth-header", "live-noise", "protocol", "close") and rng.random() < 0.7
    token = args.token
    if case.category == "auth-bad" and rng.random() < 0.5:
        header, token = True, rng.choice(["nonsense", "", "x" * 600, args.token + "x"])
    extra = f"Authorization: Bearer {token}\r\n" if header else ""
    problem = await conn.open(args.timeout, path=path, extra=extra)
    if problem:
        case.fail(f"upgrade: {problem}")
        conn.abort()
        return case
    try:
        expect_close = None
        if case.category == "auth-bad":
            if not header:
                first = rng.choice(["text", "binary", "fragmented"])
                if first == "binary":
                    await conn.send(Frame(2, os.urandom(rng.randint(0, 50))).encode(rng))
                elif first == "fragmented":
                    payload = garbage_text(rng).encode()
                    await conn.send(Frame(1, payload[:1], fin=False).encode(rng) + Frame(9, b"p").encode(rng) + Frame(0, payload[1:]).encode(rng))
                else:
                    await conn.send(Frame(1, garbage_text(rng).encode()).encode(rng))
            code = await wait_closed(conn, deadline)
            if code != 4001:
                case.fail(f"bad authentication closed with {code}, expected 4001")
            return case
        sent_texts, noise, pings = [], 0, []
        if not header:
            auth = json.dumps({"type": "auth", "token": args.token}).encode()
            if rng.random() < 0.5:
                pings.append(b"hi")
                cut = rng.randint(1, len(auth) - 1)
                data = Frame(1, auth[:cut], fin=False).encode(rng) + Frame(9, b"hi").encode(rng) + Frame(0, auth[cut:]).encode(rng)
            else:
                data = Frame(1, auth).encode(rng)
            await conn.send_chunked(data, rng, rng.choice(["whole", "tiny", "some"]))
        if not await conn.wait_until(lambda: any('"ready"' in t for t in conn.texts()), deadline):
            case.fail(f"no ready frame (events {conn.events[:3]})")
            return case
        if isinstance(since, int) and since > 10 ** 11 and not await conn.wait_until(lambda: any('"resync"' in t for t in conn.texts()), deadline):
            case.fail("?since past the newest event without resync")
        steps = rng.randint(1, 6)
        for step in range(steps):
            action = rng.random()
            if case.category == "live-noise" and action < 0.4:
                if rng.random() < 0.7:
                    await conn.send(Frame(1, garbage_text(rng).encode()).encode(rng))
                else:
                    await conn.send(Frame(2, os.urandom(rng.randint(0, 40))).encode(rng))
                noise += 1
            elif action < 0.6:
                payload = os.urandom(rng.randint(0, 20))
                pings.append(payload)
                await conn.send(Frame(9, payload).encode(rng))
            else:
                text = f"fuzz {args.seed}:{no}:{step}"
                await asyncio.to_thread(send_message, args, text)
                sent_texts.append(text)
        if case.category == "protocol":
            violation, expect_close = rng.choice([
                (Frame(1, b"x", rsv=4), 1002), (Frame(1, b"x", mask=False), 1002), (Frame(3, b""), 1002),
                (Frame(1, b"\xff\xfe"), 1007), (Frame(1, b"y" * (args.max_frame_bytes + 1)), 1009), (Frame(0, b"x"), 1002),
                (Frame(9, b"p", fin=False), 1002),
            ])
            await conn.send(violation.encode(rng))
        elif case.category == "close":
            code, expect_close = rng.choice([(1000, 1000), (1001, 1000), (3000, 1000), (1005, 1002), (999, 1002), (4999, 1000)])
            await conn.send(Frame(8, close_payload(code)).encode(rng))
        if expect_close is not None:
            got = await wait_closed(conn, deadline)
            if got != expect_close:
                case.fail(f"{case.category}: closed with {got}, expected {expect_close}")
        else:
            def settled():
                texts = conn.texts()
                delivered = all(any(json.dumps(t)[1:-1] in x for x in texts) for t in sent_texts)
                errors = sum('"type":"error"' in x for x in texts)
                return delivered and errors >= noise and len(conn.pong_payloads()) >= len(pings)
            if not await conn.wait_until(settled, deadline):
                case.fail(f"missing: events {len(sent_texts)}, error frames {noise}, pongs {len(pings)}; got {len(conn.texts())} texts")
            if [p for p in conn.pong_payloads()][:len(pings)] != pings:
                case.fail("pongs do not echo the pings in order")
            if conn.closed_frame is not None:
                case.fail(f"closed with {conn.closed_frame} though the client did nothing wrong")
        frames = frames_of(conn, case)
        check_sequence(case, frames, since)
        for problem in conn.problems:
            case.fail(f"RFC 6455: {problem}")
        return case
    finally:
        conn.abort()


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--partner-token", required=True)
    parser.add_argument("--chat", required=True)
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--timeout", type=float, default=15)
    parser.add_argument("--max-frame-bytes", type=int, default=4096)
    parser.add_argument("--categories", default=",".join(CATEGORIES))
    parser.add_argument("--only", type=int, help="run one case")
    args = parser.parse_args()
    args.categories = args.categories.split(",")
    numbers = [args.only] if args.only is not None else list(range(args.cases))
    semaphore = asyncio.Semaphore(args.concurrency)
    by_category = {}

    async def one(no):
        async with semaphore:
            case = await run_case(args, no)
            by_category.setdefault(case.category, [0, 0])[0] += 1
            if case.failures:
                by_category[case.category][1] += 1
                for failure in case.failures:
                    print(f"FAIL case {no} [{case.category}]: {failure}")
            return case

    started = time.monotonic()
    cases = await asyncio.gather(*(one(n) for n in numbers))
    failed = [c for c in cases if c.failures]
    for category, (count, bad) in sorted(by_category.items()):
        print(f"  {category:<12} {count:>4} cases, {bad} failed")
    print(f"realtime fuzz: {len(cases)} cases, seed {args.seed}, {len(failed)} failed, {time.monotonic() - started:.1f} s")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    asyncio.run(main())
