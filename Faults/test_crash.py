"""Fault 1, crash: while 16 workers register accounts, `kill -9` the server, restart it on the
same database; every registration answered with success is there and works, none is
half-written, and a registration that got no answer exists completely or not at all.

Three registration flows, spread over the workers:
  v1-email  POST /v1/signup/code {email} -> code from /dev/outbox -> POST /v1/signup (201, token)
  v1-phone  the same with {phone}
  api-phone POST /api/users/sms -> code -> POST /api/users/register with login, password, email (200)
"""
from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass
from typing import Optional

from common import (Checker, Gatehouse, Inspector, NoAnswer, NotSent, Result, http, log, now,
                    outbox_code, workdir)

WORKERS = 16
ROUNDS = 2
FLOWS = ("v1-email", "v1-phone", "api-phone")

# Each query returns the rows that break one invariant of a whole account (see docs/reliability.md).
HALF_WRITTEN_CHECKS = [
    ("account without a (bcrypt) password hash",
     "SELECT id FROM accounts WHERE password_hash IS NULL OR password_hash NOT LIKE '$2%' OR length(password_hash) < 59"),
    ("account without a phone, an email or a login",
     "SELECT id FROM accounts WHERE phone IS NULL AND email IS NULL AND username_key IS NULL"),
    ("account whose login and login key disagree",
     "SELECT id FROM accounts WHERE (username IS NULL) <> (username_key IS NULL) OR lower(username) <> username_key"),
    ("verified/confirmed mark without the phone/email it is about",
     "SELECT id FROM accounts WHERE (phone_verified_at IS NOT NULL AND phone IS NULL) "
     "OR (email_confirmed_at IS NOT NULL AND email IS NULL)"),
    ("account without its timestamps",
     "SELECT id FROM accounts WHERE created_at IS NULL OR updated_at IS NULL"),
    ("session of an account that does not exist",
     "SELECT s.id FROM sessions s WHERE NOT EXISTS (SELECT 1 FROM accounts a WHERE a.id = s.account_id)"),
    ("code of an account that does not exist",
     "SELECT c.id FROM verification_codes c WHERE c.account_id IS NOT NULL "
     "AND NOT EXISTS (SELECT 1 FROM accounts a WHERE a.id = c.account_id)"),
    ("sign-up code spent but no account for its address",
     "SELECT c.destination FROM verification_codes c WHERE c.purpose IN ('phone_signup','email_signup') "
     "AND c.consumed_at IS NOT NULL AND NOT EXISTS "
     "(SELECT 1 FROM accounts a WHERE a.phone = c.destination OR a.email = c.destination)"),
    ("account created without spending a sign-up code",
     "SELECT a.id FROM accounts a WHERE NOT EXISTS (SELECT 1 FROM verification_codes c "
     "WHERE c.purpose IN ('phone_signup','email_signup') AND c.consumed_at IS NOT NULL "
     "AND (c.destination = a.phone OR c.destination = a.email))"),
    ("more than one spent sign-up code for one address",
     "SELECT destination FROM verification_codes WHERE purpose IN ('phone_signup','email_signup') "
     "AND consumed_at IS NOT NULL GROUP BY destination HAVING count(*) > 1"),
    ("code stored without the message carrying it (or the reverse)",
     "SELECT c.destination FROM verification_codes c GROUP BY c.destination "
     "HAVING count(*) <> (SELECT count(*) FROM outbox_messages o WHERE o.destination = c.destination)"),
    ("message without any code for its address",
     "SELECT o.id FROM outbox_messages o WHERE NOT EXISTS "
     "(SELECT 1 FROM verification_codes c WHERE c.destination = o.destination)"),
    ("outbox message in an unknown state",
     "SELECT id FROM outbox_messages WHERE status NOT IN ('pending','sent','failed') OR attempts < 0"),
]


@dataclass
class Registration:
    round: int
    flow: str
    email: Optional[str]
    phone: Optional[str]
    login: Optional[str]       # tag (v1) or login (api)
    password: str
    first_name: str
    step: str = "code"         # the step reached: code, outbox, register, done
    outcome: str = "pending"   # ok | no-answer | not-sent | error NNN
    token: Optional[str] = None


class Load:
    def __init__(self, server: Gatehouse, round_no: int, counter_start: int):
        self.server = server
        self.round = round_no
        self.counter = counter_start
        self.stop = False
        self.records: list[Registration] = []
        self.unexpected: list[str] = []

    def new_registration(self, worker: int) -> Registration:
        self.counter += 1
        n = self.counter
        flow = FLOWS[(worker + n) % len(FLOWS)]
        password = f"Fault-{n}-pw!"
        name = f"Crash{n}"
        if flow == "v1-email":
            r = Registration(self.round, flow, f"crash{n}@v1.faults.test", None, f"v1tag{n}", password, name)
        elif flow == "v1-phone":
            r = Registration(self.round, flow, None, f"+7999{n:07d}", f"v1ptag{n}", password, name)
        else:
            r = Registration(self.round, flow, f"crash{n}@api.faults.test", f"+7998{n:07d}", f"apilogin{n}", password, name)
        self.records.append(r)
        return r

    async def register(self, r: Registration) -> None:
        """One registration, start to end; sets r.step and r.outcome (raises on a transport failure)."""
        port = self.server.port
        if r.flow.startswith("v1"):
            address = {"email": r.email} if r.flow == "v1-email" else {"phone": r.phone}
            answer = await http("POST", port, "/v1/signup/code", json_body=address)
            if answer.status != 202:
                r.outcome = f"error {answer.status}"
                return
            r.step = "outbox"
            code = await outbox_code(port, r.email or r.phone)
            r.step = "register"
            answer = await http("POST", port, "/v1/signup", json_body={
                **address, "code": code, "password": r.password, "firstName": r.first_name, "tag": r.login})
            if answer.status == 201:
                r.outcome, r.token = "ok", answer.json()["token"]
            else:
                r.outcome = f"error {answer.status}"
        else:
            answer = await http("POST", port, "/api/users/sms", form={"phone": r.phone})
            if answer.status != 200:
                r.outcome = f"error {answer.status}"
                return
            r.step = "outbox"
            code = await outbox_code(port, r.phone)
            r.step = "register"
            answer = await http("POST", port, "/api/users/register", form={
                "phone": r.phone, "code": code, "login": r.login, "password": r.password,
                "name": r.first_name, "email": r.email})
            ok = answer.status == 200 and answer.json().get("login") == r.login
            r.outcome = "ok" if ok else f"error {answer.status}"

    async def worker(self, worker: int) -> None:
        while not self.stop:
            r = self.new_registration(worker)
            try:
                await self.register(r)
                if r.outcome == "ok":
                    r.step = "done"
                elif not self.stop:
                    self.unexpected.append(f"{r.flow} {r.email or r.phone}: {r.outcome} at {r.step}")
            except NotSent:
                r.outcome = "not-sent"
                await asyncio.sleep(0.05)
            except NoAnswer:
                r.outcome = "no-answer"
            except RuntimeError as error:   # the outbox had no code: the server died in between
                r.outcome = "no-answer"
                if not self.stop and self.server.alive():
                    self.unexpected.append(f"{r.flow}: {error}")


def identifier_for_login(r: Registration) -> tuple[str, str]:
    """(surface, identifier) to log in with: v1 takes email/phone/tag, /api the login."""
    if r.flow == "api-phone":
        return "api", r.login
    return "v1", (r.email or r.phone) if r.round % 2 else r.login


async def can_log_in(port: int, r: Registration) -> tuple[bool, str]:
    surface, identifier = identifier_for_login(r)
    if surface == "v1":
        answer = await http("POST", port, "/v1/sessions", json_body={"identifier": identifier, "password": r.password})
        return answer.status == 201, f"{answer.status} {answer.text[:120]}"
    answer = await http("POST", port, "/api/auth/login", form={"login": identifier, "password": r.password},
                        headers={"Accept-Language": "en"})
    return answer.status == 200, f"{answer.status} {answer.text[:120]}"


def check_database(inspector: Inspector, check: Checker, label: str) -> None:
    for name, sql in HALF_WRITTEN_CHECKS:
        rows = inspector.rows(sql)
        check.expect(not rows, f"{label}: {name}: {len(rows)} row(s), e.g. {rows[:3]}")
    if inspector.engine == "sqlite":
        integrity = inspector.rows("PRAGMA integrity_check")
        check.expect(integrity == [["ok"]], f"{label}: sqlite integrity_check: {integrity[:5]}")
        fk = inspector.rows("PRAGMA foreign_key_check")
        check.expect(not fk, f"{label}: sqlite foreign_key_check: {fk[:5]}")


def accounts_by_identifier(inspector: Inspector) -> dict:
    rows = inspector.rows("SELECT a.id, a.phone, a.email, a.username_key, a.first_name, "
                          "(SELECT count(*) FROM sessions s WHERE s.account_id = a.id) FROM accounts a")
    found = {}
    for account_id, phone, email, key, first_name, sessions in rows:
        entry = {"id": account_id, "phone": phone, "email": email, "login": key, "first_name": first_name,
                 "sessions": int(sessions)}
        for value in (phone, email, key):
            if value:
                found[value] = entry
    return found


def lookup(accounts: dict, r: Registration) -> Optional[dict]:
    return accounts.get(r.phone) if r.phone else accounts.get(r.email)


def check_whole(account: dict, r: Registration) -> list[str]:
    """The account has every field its registration wrote."""
    wrong = []
    if r.phone and account["phone"] != r.phone:
        wrong.append("phone")
    if r.email and account["email"] != r.email:
        wrong.append("email")
    if account["login"] != r.login.lower():
        wrong.append("login/tag")
    if account["first_name"] != r.first_name:
        wrong.append("first name")
    if r.flow.startswith("v1") and account["sessions"] < 1:
        wrong.append("first session (v1 sign-up opens it in the same transaction)")
    return wrong


async def verify_records(server: Gatehouse, inspector: Inspector, records: list[Registration], check: Checker,
                         label: str) -> dict:
    accounts = accounts_by_identifier(inspector)
    figures = {"ok": 0, "no_answer": 0, "no_answer_present": 0, "no_answer_absent": 0, "never_registered": 0}
    to_log_in: list[tuple[Registration, str]] = []
    for r in records:
        account = lookup(accounts, r)
        if r.outcome == "ok":
            figures["ok"] += 1
            if not check.expect(account is not None, f"{label}: answered {r.flow} {r.email or r.phone} is missing"):
                continue
            wrong = check_whole(account, r)
            check.expect(not wrong, f"{label}: answered {r.flow} {r.email or r.phone} lacks {wrong}")
            to_log_in.append((r, "answered"))
        elif r.outcome == "no-answer" and r.step == "register":
            figures["no_answer"] += 1
            if account is None:
                figures["no_answer_absent"] += 1
            else:
                figures["no_answer_present"] += 1
                wrong = check_whole(account, r)
                check.expect(not wrong, f"{label}: unanswered {r.flow} {r.email or r.phone} half-written: lacks {wrong}")
                to_log_in.append((r, "unanswered"))
        else:
            figures["never_registered"] += 1
            check.expect(account is None, f"{label}: {r.flow} {r.email or r.phone} exists though its registration "
                                          f"never reached the register step ({r.outcome} at {r.step})")

    semaphore = asyncio.Semaphore(8)

    async def login(r: Registration, kind: str) -> None:
        async with semaphore:
            ok, detail = await can_log_in(server.port, r)
            check.expect(ok, f"{label}: {kind} {r.flow} {r.email or r.phone} cannot log in: {detail}")
            if r.token:
                me = await http("GET", server.port, "/v1/me", token=r.token)
                check.expect(me.status == 200, f"{label}: the sign-up token of {r.email or r.phone} no longer works: {me.status}")

    await asyncio.gather(*(login(r, kind) for r, kind in to_log_in))
    return figures


async def run(engine: str, database_url: str, inspector: Inspector, port: int, seed: int) -> Result:
    check = Checker(f"crash[{engine}]")
    rng = random.Random(seed)
    work = workdir(f"faults-crash-{engine}")
    server = Gatehouse(f"crash-{engine}", port, database_url, work)
    all_records: list[Registration] = []
    answered_before_kill, kill_times, in_flight = [], [], []
    try:
        await server.start()
        counter = 0
        for round_no in range(1, ROUNDS + 1):
            load = Load(server, round_no, counter)
            tasks = [asyncio.create_task(load.worker(w)) for w in range(WORKERS)]
            kill_after = rng.uniform(2.0, 4.0)
            started = now()
            await asyncio.sleep(kill_after)
            server.kill9()
            kill_times.append(round(kill_after, 2))
            load.stop = True
            await asyncio.gather(*tasks)
            counter = load.counter
            all_records += load.records
            unanswered = [r for r in load.records if r.outcome == "no-answer" and r.step == "register"]
            answered = sum(1 for r in load.records if r.outcome == "ok")
            answered_before_kill.append(answered)
            in_flight.append(len(unanswered))
            log(f"  round {round_no}: kill -9 after {kill_after:.2f}s: {answered} registrations answered, "
                f"{len(unanswered)} register calls unanswered, {len(load.records)} started "
                f"({answered / max(now() - started, 0.001):.0f}/s)")
            for problem in load.unexpected[:5]:
                check.expect(False, f"round {round_no}: unexpected answer before the kill: {problem}")
            check_database(inspector, check, f"round {round_no} after kill")
            await server.start()
            figures = await verify_records(server, inspector, all_records, check, f"round {round_no} after restart")
            log(f"  round {round_no}: after restart: {figures}")
        check.expect(sum(answered_before_kill) > 0, "no registration was answered before the kill: the load did not run")
        check.figures.update({
            "answered_before_kill": "+".join(map(str, answered_before_kill)),
            "unanswered_register_calls": "+".join(map(str, in_flight)),
            "kill_after_s": "/".join(map(str, kill_times)),
            "unanswered_committed": figures["no_answer_present"],
            "unanswered_absent": figures["no_answer_absent"],
            "accounts": inspector.scalar("SELECT count(*) FROM accounts"),
        })
    except Exception as error:
        check.expect(False, f"harness error: {type(error).__name__}: {error}")
    finally:
        server.stop()
    return check.result()
