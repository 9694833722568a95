"""Fault 5, messages under kill -9: 16 senders, each in its own one-to-one chat, send numbered
messages, each with its own `clientMessageId`, and retry a send that got no answer (the same id)
until it is answered, across two `kill -9` and restarts of the server on the same database. At the
end every chat holds each sender's messages exactly once, in order, with no gap: the one a crash
interrupted is there once whether or not its first try committed. Each account's event sequence
is gap-free and has one `message.created` per message it saw. Every other reader has a push device
and coalescing is off: every committed message to one of them has exactly one push in the outbox
(none lost, none for a send that rolled back), and none failed; the messages to the others have
none. On PostgreSQL every message is written in one statement with no transaction around it
(docs/messenger.md), which queues its push; the push lane composes the queue after the commit
(docs/push.md, "When a push is written"), so a kill between the two leaves the push to the next
process, and one inside a composition leaves it to compose again: once either way.
"""
from __future__ import annotations

import asyncio
import json
import random
from collections import Counter

from common import Checker, Gatehouse, Inspector, NoAnswer, NotSent, Result, http, log, now, outbox_code, workdir

SENDERS = 16
KILLS = 2
# The readers with a push device: the even ones. A send to the others writes no push, and on PostgreSQL is one statement.
WITH_DEVICE = set(range(0, SENDERS, 2))


async def sign_up(port: int, name: str) -> dict:
    email = f"{name}@messages.faults.test"
    answer = await http("POST", port, "/v1/signup/code", json_body={"email": email})
    assert answer.status == 202, answer.text
    code = await outbox_code(port, email)
    answer = await http("POST", port, "/v1/signup", json_body={"email": email, "code": code, "password": "Fault-pw-1!", "tag": name})
    assert answer.status == 201, answer.text
    session = answer.json()
    return {"token": session["token"], "id": session["account"]["id"]}


class Sender:
    def __init__(self, index: int, author: dict, chat: str, server: Gatehouse):
        self.index, self.author, self.chat, self.server = index, author, chat, server
        self.answered: list[tuple[int, str]] = []  # (number, message id)
        self.retries = 0
        self.stop = False
        self.unexpected: list[str] = []

    async def run(self) -> None:
        number = 0
        while not self.stop:
            body = {"text": f"sender {self.index} #{number}", "clientMessageId": f"s{self.index}-{number}"}
            while True:
                try:
                    answer = await http("POST", self.server.port, f"/v1/chats/{self.chat}/messages", json_body=body,
                                        token=self.author["token"], timeout=15)
                except (NotSent, NoAnswer):
                    self.retries += 1
                    await asyncio.sleep(0.05)
                    continue
                if answer.status == 201:
                    self.answered.append((number, answer.json()["id"]))
                elif answer.status in (502, 503, 504):
                    # A balancer's "the instance went away" (or the database did): not answered, sent again.
                    self.retries += 1
                    await asyncio.sleep(0.05)
                    continue
                else:
                    self.unexpected.append(f"{answer.status} {answer.text[:120]}")
                    await asyncio.sleep(0.05)
                    continue
                break
            number += 1


async def history(port: int, token: str, chat: str) -> list[dict]:
    items, before = [], None
    while True:
        path = f"/v1/chats/{chat}/messages?limit=200" + (f"&before={before}" if before else "")
        answer = await http("GET", port, path, token=token)
        assert answer.status == 200, answer.text
        page = answer.json()
        items = page["items"] + items
        if not page["hasMoreBefore"] or not page["items"]:
            return items
        before = page["items"][0]["id"]


async def run(engine: str, database_url: str, inspector: Inspector, port: int, seed: int) -> Result:
    check = Checker(f"messages[{engine}]")
    rng = random.Random(seed)
    server = Gatehouse(f"messages-{engine}", port, database_url, workdir(f"faults-messages-{engine}"),
                       extra_env={"GATEHOUSE_MESSENGER_MESSAGES_PER_MINUTE": "1000000", "GATEHOUSE_PUSH_COALESCE_SECONDS": "0",
                                  "GATEHOUSE_ENV": "development"})
    try:
        await server.start()
        authors, readers, chats = [], [], []
        for index in range(SENDERS):
            author = await sign_up(server.port, f"author{index}x")
            reader = await sign_up(server.port, f"reader{index}x")
            if index in WITH_DEVICE:
                device = await http("POST", server.port, "/v1/me/devices", json_body={"platform": "fcm", "token": f"reader-{index}"},
                                    token=reader["token"])
                assert device.status == 201, device.text
            answer = await http("POST", server.port, "/v1/chats", json_body={"personId": reader["id"]}, token=author["token"])
            assert answer.status == 200, answer.text
            authors.append(author)
            readers.append(reader)
            chats.append(answer.json()["id"])
        senders = [Sender(i, authors[i], chats[i], server) for i in range(SENDERS)]
        tasks = [asyncio.create_task(s.run()) for s in senders]
        kills = []
        started = now()
        for _ in range(KILLS):
            wait = rng.uniform(1.5, 3.0)
            await asyncio.sleep(wait)
            server.kill9()
            kills.append(round(wait, 2))
            await asyncio.sleep(rng.uniform(0.1, 0.5))
            await server.start()
        await asyncio.sleep(1.0)
        for sender in senders:
            sender.stop = True
        await asyncio.gather(*tasks)
        took = now() - started
        total = sum(len(s.answered) for s in senders)
        log(f"  {total} messages answered by {SENDERS} senders in {took:.1f}s across {KILLS} kills "
            f"({sum(s.retries for s in senders)} retried after no answer)")
        check.expect(total > 0, "no message was answered: the load did not run")

        messages, pushes = await verify(check, senders, readers, inspector, server.port)
        check.figures.update({"messages": messages, "pushes": pushes, "retried": sum(s.retries for s in senders), "kill_after_s": "/".join(map(str, kills)),
                              "rate_per_s": f"{total / max(took, 0.001):.0f}"})
    except Exception as error:
        check.expect(False, f"harness error: {type(error).__name__}: {error}")
    finally:
        server.stop()
    return check.result()


async def verify(check: Checker, senders: list[Sender], readers: list[dict], inspector: Inspector, port: int,
                 every_push: bool = True) -> tuple[str, int]:
    """Each reader's chat holds its sender's answered messages once each, in order; every account's events are
    numbered without a gap, one `message.created` per member and message; one push per committed message to a reader
    with a device (`WITH_DEVICE`) (with `every_push`; else at most one, and none for a message not committed: under a
    load the outbox does not keep up with, a push not sent yet is replaced in place by the chat's next one, as
    docs/push.md says), none for a message to a reader without one.
    Returns how many messages the database holds, and how many pushes."""
    # The pushes still queued are composed by the push lane (every poll interval, a second): wait for an empty queue.
    for _ in range(150):
        if int(inspector.scalar("SELECT count(*) FROM push_queue")) == 0:
            break
        await asyncio.sleep(0.1)
    check.expect(int(inspector.scalar("SELECT count(*) FROM push_queue")) == 0, "pushes still queued 15 s after the load")
    committed: list[str] = []
    silent: list[str] = []  # committed, to a reader without a device
    for sender in senders:
        (committed if sender.index in WITH_DEVICE else silent).extend(m for _, m in sender.answered)
        for problem in sender.unexpected[:3]:
            check.expect(False, f"sender {sender.index}: unexpected answer {problem}")
        items = await history(port, readers[sender.index]["token"], sender.chat)
        texts = [item["text"] for item in items]
        expected = [f"sender {sender.index} #{n}" for n, _ in sender.answered]
        check.expect(texts == expected, f"sender {sender.index}: the reader sees {len(texts)} messages, expected "
                                        f"{len(expected)} once each in order; first difference at "
                                        f"{next((i for i, (a, b) in enumerate(zip(texts, expected)) if a != b), min(len(texts), len(expected)))}")
        ids = [item["id"] for item in items]
        check.expect(ids == [m for _, m in sender.answered], f"sender {sender.index}: the answered ids are not the stored ones")

    # Every account's events: numbered 1..N without a gap, the counter at N, one message.created
    # per message each member saw.
    gaps = inspector.rows("SELECT account_id FROM messenger_events GROUP BY account_id "
                          "HAVING count(*) <> max(seq) OR min(seq) <> 1")
    check.expect(not gaps, f"event sequences with gaps: {gaps[:3]}")
    behind = inspector.rows("SELECT c.account_id FROM messenger_event_counters c WHERE c.last_seq <> "
                            "(SELECT max(seq) FROM messenger_events e WHERE e.account_id = c.account_id)")
    check.expect(not behind, f"counters that disagree with the events: {behind[:3]}")
    created = inspector.scalar("SELECT count(*) FROM messenger_events WHERE kind = 'message.created'")
    messages = inspector.scalar("SELECT count(*) FROM messages")
    check.expect(int(created) == 2 * int(messages), f"{created} message.created events for {messages} messages (2 each)")
    stale = inspector.rows("SELECT c.id FROM chats c WHERE c.last_message_id IS NOT NULL AND c.last_message_id <> "
                           "(SELECT m.id FROM messages m WHERE m.chat_id = c.id ORDER BY m.id DESC LIMIT 1)")
    check.expect(not stale, f"chats whose last message is not their newest: {stale[:3]}")
    # Pushes: one per committed message, queued with it, composed after (the outbox keeps them in development).
    pushes = Counter()
    for body, status in inspector.rows("SELECT body, status FROM outbox_messages WHERE kind = 'push'"):
        pushes[json.loads(body)["data"].get("message", "")] += 1
        check.expect(status != "failed", "a push failed")
    pushed_silent = [m for m in silent if pushes[m.lower()] + pushes[m.upper()] != 0]
    check.expect(not pushed_silent, f"{len(pushed_silent)} messages to a reader without a device pushed (first: {pushed_silent[:3]})")
    check.expect(bool(committed) and bool(silent), "both kinds of reader (with a device and without) got messages")
    if every_push:
        missing = [m for m in committed if pushes[m.lower()] + pushes[m.upper()] != 1]
        check.expect(not missing, f"{len(missing)} committed messages without exactly one push (first: {missing[:3]})")
        check.expect(sum(pushes.values()) == len(committed), f"{sum(pushes.values())} pushes for {len(committed)} messages to readers with a "
                                                             "device: a push for a send that rolled back")
    else:
        known = {m.lower() for m in committed}
        twice = [m for m, n in pushes.items() if n > 1]
        check.expect(not twice, f"{len(twice)} messages pushed twice (first: {twice[:3]})")
        stray = [m for m in pushes if m.lower() not in known]
        check.expect(not stray, f"{len(stray)} pushes for messages no sender was told about (a send that rolled back): {stray[:3]}")
    if inspector.engine == "sqlite":
        integrity = inspector.rows("PRAGMA integrity_check")
        check.expect(integrity == [["ok"]], f"sqlite integrity_check: {integrity[:5]}")
    return messages, sum(pushes.values())
