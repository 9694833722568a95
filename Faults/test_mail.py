"""Fault 2, mail server faults: gatehouse sends through an SMTP server that rejects or drops a
quarter of its connections (smtp_faulty.py). Every confirmation mail must arrive eventually,
exactly once where the fault came before the server took the message, and the outbox must show
every mail sent. A fault that loses the server's `250` after it took the message (`lost-ack`)
makes one extra copy per such fault: at-least-once, by design (docs/reliability.md).

Mails: MAILS/2 sign-up codes (POST /v1/signup/code with an email) and MAILS/2 confirmation
links (POST /api/users/send-confirm for accounts registered by phone with an email). Each
received mail is then used: the code completes the sign-up, the link confirms the address.
"""
from __future__ import annotations

import asyncio
import re
from collections import Counter

from common import Checker, Gatehouse, Inspector, Result, http, log, now, outbox_code, workdir
from smtp_faulty import FaultySMTPServer

MAILS = 60
DEADLINE_S = 90


async def run(engine: str, database_url: str, inspector: Inspector, port: int, seed: int) -> Result:
    check = Checker(f"mail[{engine}]")
    smtp_port = port + 1
    smtp = FaultySMTPServer(smtp_port, seed)
    await smtp.start()
    work = workdir(f"faults-mail-{engine}")
    server = Gatehouse(f"mail-{engine}", port, database_url, work, {
        "GATEHOUSE_EMAIL_CHANNEL": "smtp", "SMTP_SECURITY": "none", "SMTP_HOST": "127.0.0.1",
        "SMTP_PORT": str(smtp_port), "SMTP_TIMEOUT_SECONDS": "2",
        "GATEHOUSE_DELIVERY_RETRY_BASE_SECONDS": "0.2", "GATEHOUSE_DELIVERY_RETRY_MAX_SECONDS": "1",
        "GATEHOUSE_DELIVERY_POLL_SECONDS": "0.1", "GATEHOUSE_DELIVERY_MAX_ATTEMPTS": "1000",
    })
    try:
        await server.start()
        half = MAILS // 2
        code_mails = [f"signup{i}@v1mail.faults.test" for i in range(half)]
        link_mails = [f"confirm{i}@apimail.faults.test" for i in range(MAILS - half)]

        # Accounts for the confirmation links: phone sign-up (the SMS stays in the dev outbox).
        tokens: dict[str, str] = {}

        async def api_account(i: int, address: str) -> None:
            phone = f"+7997{i:07d}"
            assert (await http("POST", port, "/api/users/sms", form={"phone": phone})).status == 200
            code = await outbox_code(port, phone)
            answer = await http("POST", port, "/api/users/register", form={
                "phone": phone, "code": code, "password": "Mail-pass-1!", "email": address})
            assert answer.status == 200, answer.text
            answer = await http("POST", port, "/api/auth/login", form={"login": phone, "password": "Mail-pass-1!"})
            assert answer.status == 200, answer.text
            tokens[address] = answer.json()["token"]

        await asyncio.gather(*(api_account(i, a) for i, a in enumerate(link_mails)))

        # The mails, all at once.
        started = now()

        async def trigger(address: str) -> None:
            if address in tokens:
                answer = await http("POST", port, "/api/users/send-confirm", token=tokens[address])
                check.expect(answer.status == 200, f"send-confirm for {address}: {answer.status} {answer.text[:100]}")
            else:
                answer = await http("POST", port, "/v1/signup/code", json_body={"email": address})
                check.expect(answer.status == 202, f"signup code for {address}: {answer.status} {answer.text[:100]}")

        await asyncio.gather(*(trigger(a) for a in code_mails + link_mails))

        # Wait until the outbox has sent every mail (a sent row is never claimed again, so no
        # copy can arrive after that) and every recipient has something.
        wanted = set(code_mails + link_mails)
        all_sent_at = None
        while now() - started < DEADLINE_S:
            states = inspector.rows("SELECT status, count(*) FROM outbox_messages WHERE kind = 'email' GROUP BY status")
            counts = {status: int(n) for status, n in states}
            got = {r for m in smtp.received for r in m.recipients}
            if counts.get("sent", 0) >= MAILS and not counts.get("pending") and wanted <= got:
                all_sent_at = now() - started
                break
            await asyncio.sleep(0.1)
        check.expect(all_sent_at is not None, f"not every mail delivered within {DEADLINE_S}s: outbox {counts}, "
                                              f"{len(wanted - got)} recipients without mail")

        # Per recipient: copies received vs the lost-ack faults that hit its connections.
        copies = Counter(r for m in smtp.received for r in m.recipients)
        lost_acks = Counter(r for c in smtp.connections if c.fault == "lost-ack" for r in c.recipients)
        missing = sorted(wanted - set(copies))
        check.expect(not missing, f"{len(missing)} recipients never got their mail: {missing[:5]}")
        exact_expected = [r for r in wanted if not lost_acks[r]]
        wrong_exact = {r: copies[r] for r in exact_expected if copies[r] != 1}
        check.expect(not wrong_exact, f"exactly-once broken (no lost ack, yet copies != 1): {wrong_exact}")
        wrong_lost = {r: (copies[r], lost_acks[r]) for r in wanted if lost_acks[r] and copies[r] != 1 + lost_acks[r]}
        check.expect(not wrong_lost, f"lost-ack recipients: copies != 1 + lost acks: {wrong_lost}")
        strangers = set(copies) - wanted
        check.expect(not strangers, f"mail to unexpected recipients: {sorted(strangers)[:5]}")

        # The outbox: one row per recipient, sent, attempts = the connections its delivery took.
        rows = inspector.rows("SELECT destination, status, attempts FROM outbox_messages WHERE kind = 'email'")
        per_destination = Counter(d for d, _, _ in rows)
        check.expect(len(rows) == MAILS and all(per_destination[d] == 1 for d in wanted),
                     f"outbox has {len(rows)} mail rows for {MAILS} mails: {dict(per_destination)}")
        not_sent = [(d, s) for d, s, _ in rows if s != "sent"]
        check.expect(not not_sent, f"outbox rows not sent: {not_sent[:5]}")
        attempts = sum(int(a) for _, _, a in rows)
        check.expect(attempts == len(smtp.connections),
                     f"outbox counts {attempts} attempts but the SMTP server saw {len(smtp.connections)} connections")
        faults = smtp.fault_counts()
        check.expect(sum(faults.values()) > 0, "no fault was injected")

        # Use what arrived: the first copy of each mail must work.
        first = {}
        for m in smtp.received:
            for r in m.recipients:
                first.setdefault(r, m.text)
        used_ok = 0
        for address in code_mails:
            match = re.search(r"\b(\d{6})\b", first.get(address, ""))
            if not check.expect(match is not None, f"no code in the mail to {address}"):
                continue
            answer = await http("POST", port, "/v1/signup", json_body={
                "email": address, "code": match.group(1), "password": "Mail-pass-1!"})
            used_ok += check.expect(answer.status == 201, f"sign-up with the mailed code for {address}: {answer.status}")
        for address in link_mails:
            match = re.search(r"/api/users/confirm\?id=([A-Za-z0-9_\-]+)", first.get(address, ""))
            if not check.expect(match is not None, f"no link in the mail to {address}"):
                continue
            # Opening the link shows a button; the button confirms (POST).
            page = await http("POST", port, "/api/users/confirm", form={"id": match.group(1)})
            ok = page.status == 200 and 'data-state="confirmed"' in page.text
            user = await http("GET", port, "/api/users/user", token=tokens[address])
            ok = ok and user.status == 200 and user.json().get("isConfirmed") is True
            used_ok += check.expect(ok, f"confirmation link mailed to {address} did not confirm: {page.status}")

        duplicates = sum(copies.values()) - len(copies)
        message_ids_distinct = len({m.message_id for m in smtp.received}) == len(smtp.received)
        check.figures.update({
            "mails": MAILS,
            "delivered": len(copies),
            "exactly_once": len(exact_expected) - len(wrong_exact),
            "duplicates": duplicates,
            "lost_acks": sum(lost_acks.values()),
            "connections": len(smtp.connections),
            "faults": sum(faults.values()),
            "all_sent_s": f"{all_sent_at:.1f}" if all_sent_at is not None else "n/a",
            "mails_used_ok": used_ok,
        })
        log(f"  faults injected: {faults}")
        log(f"  duplicate copies carry {'distinct' if message_ids_distinct else 'repeated'} Message-IDs")
    except Exception as error:
        check.expect(False, f"harness error: {type(error).__name__}: {error}")
    finally:
        server.stop()
        await smtp.stop()
    return check.result()
