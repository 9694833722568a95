"""The ledger checker (docs/wallet.md, "The checker"), Jepsen-style: many clients move money
between wallets at once, every one retrying a request that got no answer with the same
`Idempotency-Key` until it is answered, while the server is killed (`kill -9`) and restarted and
PostgreSQL is restarted under them. Then the final database is read directly and every claim is
checked against what the clients were told:

- the balances of all people sum to the money credited, plus the top-ups paid through the payment
  provider, minus the refunds given back; all wallets (with the system one) sum to 0;
- every top-up a client paid (on the development provider's page, its notification signed as
  Stripe's, retried across the kill) is credited exactly once, and every refund (`gatehouse
  wallet refund`, run while the clients pay) moved its amount back once;
- no person's balance is below zero;
- every transfer a client was told about (201, or 200 for a paid request) is in the ledger exactly
  once, with its amount and its two sides, and nothing else is: a refused intent moved nothing, and
  no key moved money twice however often it was retried (one transfer in twenty is also sent again
  after its answer, as a client that lost the answer would, and must be answered the same);
- every balance equals the sum of its entries, every movement has two entries summing to zero;
- what each client saw agrees with the ledger: the balance a payer was told after a transfer is
  the entry's `balance_after` in the ledger, and each account's history over the API is its entries.

`LEDGER_OPS` operations (10,000 by default: 72% transfers, 18% requests confirmed by their payer,
7% top-ups through the payment provider, 3% refunds of a paid top-up)
from `LEDGER_CLIENTS` (64) concurrent clients among `LEDGER_ACCOUNTS` (100) accounts. With faults:
the server is killed at a third of the run and PostgreSQL is restarted at two thirds.
"""
from __future__ import annotations

import asyncio
import json
import os
import random
import subprocess
import uuid
from collections import defaultdict
from typing import Optional

from common import (Checker, FaultsPostgres, Gatehouse, Inspector, NoAnswer, NotSent, Result, gatehouse_binary, http, log, now,
                    outbox_code, workdir)

ACCOUNTS = int(os.environ.get("LEDGER_ACCOUNTS", "100"))
CLIENTS = int(os.environ.get("LEDGER_CLIENTS", "64"))
OPS = int(os.environ.get("LEDGER_OPS", "10000"))
CREDIT_ROUBLES = 1000
LIMITS = {
    "GATEHOUSE_WALLET_REQUESTS_PER_DAY": "1000000",
    "GATEHOUSE_WALLET_DAILY_LIMIT_KOPECKS": "1000000000000",
    "GATEHOUSE_MESSENGER_MESSAGES_PER_MINUTE": "1000000",
    # 20 a day by default: at 10,000 operations a client tops up about a dozen times, and every retry after a crash or
    # a database restart counts again, so a few went past it (429) in one run in several.
    "GATEHOUSE_TOPUPS_PER_DAY": "1000000",
}
# Answers that say "not done, try again": the server was going down or the database was away.
RETRIED = {500, 502, 503, 504}


def norm(uuid_text: str) -> str:
    """An id as both engines and the API may spell it (upper or lower case, with or without dashes)."""
    return uuid_text.lower().replace("-", "")


class Account:
    def __init__(self, index: int, token: str, account_id: str, tag: str, phone: str):
        self.index, self.token, self.id, self.tag, self.phone = index, token, account_id, tag, phone


async def sign_up(port: int, index: int) -> Account:
    tag = f"payer{index}"
    email = f"{tag}@ledger.faults.test"
    phone = f"+7916{index:07d}"
    answer = await http("POST", port, "/v1/signup/code", json_body={"email": email})
    assert answer.status == 202, answer.text
    code = await outbox_code(port, email)
    answer = await http("POST", port, "/v1/signup", json_body={"email": email, "code": code, "password": "Fault-pw-1!", "tag": tag,
                                                                "firstName": "Payer", "lastName": str(index)})
    assert answer.status == 201, answer.text
    session = answer.json()
    token = session["token"]
    answer = await http("POST", port, "/v1/me/phone", json_body={"phone": phone, "currentPassword": "Fault-pw-1!"}, token=token)
    assert answer.status == 202, answer.text
    code = await outbox_code(port, phone)
    answer = await http("POST", port, "/v1/me/phone/verify", json_body={"code": code, "phone": phone}, token=token)
    assert answer.status == 200, answer.text
    answer = await http("POST", port, "/v1/wallet", token=token)
    assert answer.status == 201, answer.text
    return Account(index, token, session["account"]["id"], tag, phone)


def credit(server: Gatehouse, phone: str, roubles: int) -> None:
    """`gatehouse wallet credit`, the operator's command, on the server's database."""
    out = subprocess.run([gatehouse_binary(), "wallet", "credit", "--phone", phone, "--amount", f"{roubles}.00", "--json"],
                         cwd=server.workdir, env=server.env(), capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise RuntimeError(f"wallet credit {phone}: {out.stderr.strip() or out.stdout.strip()}")


class Client:
    """One of the concurrent clients: takes operations from the shared budget, retries each request
    with its key until it has an answer, and writes down what it was told."""

    def __init__(self, index: int, accounts: list[Account], server: Gatehouse, budget: list, rng: random.Random):
        self.index, self.accounts, self.server, self.budget, self.rng = index, accounts, server, budget, rng
        self.acknowledged: list[dict] = []   # transfers we were told happened: id, amount, from, to, balance, key
        self.topups: list[dict] = []         # top-ups paid: transfer, amount, account
        self.refunds: list[dict] = []        # top-ups given back: transfer, amount
        self.refunds_refused = 0
        self.refused = 0
        self.retries = 0
        self.keys_retried = 0
        self.duplicates = 0
        self.unexpected: list[str] = []

    async def call(self, method: str, path: str, token: str, key: str, body=None) -> tuple[int, dict]:
        """The request, repeated with the same key until the server answers it for good."""
        tries = 0
        first = now()
        while True:
            tries += 1
            if now() - first > 120:
                # A server that never comes back is a finding, not a reason to wait for ever.
                return 0, {"raw": f"no answer for 120 s after {tries - 1} tries"}
            try:
                answer = await http(method, self.server.port, path, json_body=body, token=token,
                                    headers={"Idempotency-Key": key}, timeout=20)
            except (NotSent, NoAnswer):
                self.retries += 1
                await asyncio.sleep(0.05 + self.rng.random() * 0.1)
                continue
            if answer.status in RETRIED:
                self.retries += 1
                await asyncio.sleep(0.05 + self.rng.random() * 0.1)
                continue
            if tries > 1:
                self.keys_retried += 1
            try:
                return answer.status, answer.json() if answer.body else {}
            except ValueError:
                return answer.status, {"raw": answer.text[:200]}

    async def answered(self, method: str, path: str, **kwargs):
        """A request without a key (a read, a press on the payment page), repeated until answered."""
        first = now()
        while now() - first < 120:
            try:
                answer = await http(method, self.server.port, path, timeout=20, **kwargs)
            except (NotSent, NoAnswer):
                answer = None
            if answer is not None and answer.status not in RETRIED:
                return answer
            self.retries += 1
            await asyncio.sleep(0.05 + self.rng.random() * 0.1)
        return None

    async def top_up(self, account: Account) -> None:
        """A top-up through the payment provider: started with a key, paid on the provider's page (the
        development stand-in, whose notification is signed and checked as Stripe's), then read back."""
        amount = self.rng.randint(100, 50_000)
        status, body = await self.call("POST", "/v1/wallet/topups", account.token, f"u-{uuid.uuid4()}", {"amount": amount})
        if status != 201 or body.get("state") != "pending":
            return self.unexpected.append(f"top-up: {status} {str(body)[:160]}")
        page = "/" + body["confirmationUrl"].split("/", 3)[3]
        pressed = await self.answered("POST", page, form={"id": page.rsplit("/", 1)[1]})
        if pressed is None or pressed.status != 200 or not ("credited" in pressed.text or "Already paid" in pressed.text):
            return self.unexpected.append(f"payment page: {pressed and pressed.status} {pressed and pressed.text[:160]}")
        read = await self.answered("GET", f"/v1/wallet/topups/{body['id']}", token=account.token)
        done = read.json() if read is not None and read.status == 200 else {}
        if done.get("state") != "paid" or not done.get("transferId"):
            return self.unexpected.append(f"a paid top-up reads {read and read.status} {str(done)[:160]}")
        self.topups.append({"transfer": done["transferId"], "amount": amount, "account": account.id, "refunded": False})

    async def refund(self) -> None:
        """An operator gives one of this client's paid top-ups back (`gatehouse wallet refund`)."""
        open_ones = [t for t in self.topups if not t["refunded"]]
        if not open_ones:
            return
        topup = self.rng.choice(open_ones)
        loop = asyncio.get_running_loop()
        for attempt in range(40):
            out = await loop.run_in_executor(None, lambda: subprocess.run(
                [gatehouse_binary(), "wallet", "refund", "--transfer", topup["transfer"], "--reason", "checker", "--json"],
                cwd=self.server.workdir, env=self.server.env(), capture_output=True, text=True, timeout=60))
            if out.returncode == 0:
                result = json.loads(out.stdout)["result"]
                if result == "refunded" or (result == "before" and attempt > 0):
                    topup["refunded"] = True
                    self.refunds.append({"transfer": topup["transfer"], "amount": topup["amount"]})
                else:
                    self.unexpected.append(f"refund: {out.stdout.strip()[:160]}")
                return
            said = (out.stderr + out.stdout).lower()
            if "not enough money" in said or "insufficient" in said or "no longer holds" in said:
                # The money was spent meanwhile: refused, nothing moved.
                self.refunds_refused += 1
                return
            # The database was away (PostgreSQL restarting): the operator runs it again.
            await asyncio.sleep(0.5)
        self.unexpected.append(f"refund never went through: {out.stderr.strip()[:200]}")

    async def run(self) -> None:
        while self.budget[0] > 0:
            self.budget[0] -= 1
            payer, payee = self.rng.sample(self.accounts, 2)
            amount = self.rng.randint(1, 50_000)
            pick = self.rng.random()
            if pick >= 0.97 and any(not t["refunded"] for t in self.topups):
                await self.refund()
            elif pick >= 0.90:
                await self.top_up(payer)
            elif pick < 0.72:
                key = f"t-{uuid.uuid4()}"
                status, body = await self.call("POST", "/v1/wallet/transfers", payer.token, key,
                                               {"to": {"tag": payee.tag}, "amount": amount, "comment": f"c{self.index}"})
                if status == 201 and self.rng.random() < 0.05:
                    # A client that lost the answer and sends the same request again: it must be
                    # told the same thing, and nothing may move a second time.
                    again, replayed = await self.call("POST", "/v1/wallet/transfers", payer.token, key,
                                                      {"to": {"tag": payee.tag}, "amount": amount, "comment": f"c{self.index}"})
                    self.duplicates += 1
                    if (again, replayed) != (status, body):
                        self.unexpected.append(f"a repeated key answered {again} {str(replayed)[:120]}, first {status} {str(body)[:120]}")
                if status == 201:
                    body = dict(body["transfer"], balance=body["balance"])
                self.record(status, body, 201, amount, payer, payee, key)
            else:
                # The payee asks, the payer confirms: two-sided consent, then the money.
                status, body = await self.call("POST", "/v1/wallet/requests", payee.token, f"r-{uuid.uuid4()}",
                                               {"from": {"tag": payer.tag}, "amount": amount, "kind": "invoice"})
                if status != 201:
                    self.unexpected.append(f"request: {status} {body}")
                    continue
                key = f"c-{uuid.uuid4()}"
                status, paid = await self.call("POST", f"/v1/wallet/requests/{body['id']}/confirm", payer.token, key)
                if status == 200:
                    paid = dict(paid["transfer"], balance=paid["balance"], requestState=paid["request"]["state"])
                self.record(status, paid, 200, amount, payer, payee, key)

    def record(self, status: int, body: dict, success: int, amount: int, payer: Account, payee: Account, key: str) -> None:
        if status == success:
            self.acknowledged.append({"id": body["id"], "amount": amount, "from": payer.id, "to": payee.id,
                                      "balance": body["balance"], "key": key, "state": body.get("requestState")})
            if body["amount"] != amount or body["from"]["id"] != payer.id or body["to"]["id"] != payee.id:
                self.unexpected.append(f"an answer that is not the request: {body}")
        elif status == 422 and body.get("code") == "insufficient_funds":
            self.refused += 1
        else:
            self.unexpected.append(f"{status} {str(body)[:160]}")


async def prepare(server, accounts_count: int = ACCOUNTS) -> tuple[list[Account], int]:
    """`accounts_count` people signed up through `server.port`, phones verified, wallets attached and credited
    by the operator's command; the money credited."""
    t0 = now()
    accounts = []
    for start in range(0, accounts_count, 16):
        accounts += await asyncio.gather(*(sign_up(server.port, i) for i in range(start, min(start + 16, accounts_count))))
    loop = asyncio.get_running_loop()
    semaphore = asyncio.Semaphore(6)

    async def credited(account: Account) -> None:
        async with semaphore:
            await loop.run_in_executor(None, credit, server, account.phone, CREDIT_ROUBLES)
    await asyncio.gather(*(credited(a) for a in accounts))
    log(f"  {len(accounts)} accounts signed up, phones verified, wallets attached and credited in {now() - t0:.1f}s")
    return accounts, len(accounts) * CREDIT_ROUBLES * 100


async def run(engine: str, database_url: str, inspector: Inspector, port: int, seed: int, faults: bool,
              pg: Optional[FaultsPostgres] = None) -> Result:
    name = f"ledger{'-faults' if faults else ''}[{engine}]"
    check = Checker(name)
    rng = random.Random(seed)
    server = Gatehouse(f"ledger-{engine}-{'faults' if faults else 'calm'}", port, database_url,
                       workdir(f"faults-ledger-{engine}"), extra_env=LIMITS)
    try:
        await server.start()
        accounts, credited_total = await prepare(server)
        loop = asyncio.get_running_loop()
        budget = [OPS]
        clients = [Client(i, accounts, server, budget, random.Random(rng.random())) for i in range(CLIENTS)]
        started = now()
        tasks = [asyncio.create_task(c.run()) for c in clients]
        events = []
        if faults:
            while budget[0] > OPS * 2 // 3 and not all(t.done() for t in tasks):
                await asyncio.sleep(0.02)
            server.kill9()
            events.append(f"kill -9 at {OPS - budget[0]} ops")
            await asyncio.sleep(rng.uniform(0.2, 0.8))
            await server.start()
            if engine == "pg" and pg is not None:
                while budget[0] > OPS // 3 and not all(t.done() for t in tasks):
                    await asyncio.sleep(0.02)
                await loop.run_in_executor(None, pg.stop, "immediate")
                events.append(f"PostgreSQL restarted at {OPS - budget[0]} ops")
                await asyncio.sleep(rng.uniform(0.5, 1.5))
                await loop.run_in_executor(None, pg.start)
        await asyncio.gather(*tasks)
        ways = await batch_ways(server.port)
        log(f"  transfer batches by way since the server last started: {ways}")
        # Both ways kept exercised: without faults, some batches of the run must have been one statement. With them
        # the counts start at the last restart, a few dozen batches of which a failed statement sends eight at a time
        # the transaction's way: none in one statement is possible there (seen at 600 operations), and only told.
        if engine == "pg" and not faults:
            check.expect(ways.get("one_statement", 0) > 0, f"no batch of transfers was written as one statement on PostgreSQL: {ways}")
        await verify(check, server, inspector, accounts, credited_total, clients, OPS, now() - started, events, rng)
    except Exception as error:
        check.expect(False, f"harness error: {type(error).__name__}: {error}")
    finally:
        server.stop()
    return check.result()


async def batch_ways(port: int) -> dict[str, int]:
    """`gatehouse_transfer_batches_total` by `way` in /metrics: how the server, since it last started, wrote the
    batches (docs/wallet.md, "Group commit")."""
    response = await http("GET", port, "/metrics")
    ways: dict[str, int] = {}
    for line in response.body.decode().splitlines():
        if line.startswith('gatehouse_transfer_batches_total{way="'):
            ways[line.split('"')[1]] = int(float(line.rsplit(" ", 1)[1]))
    return ways


async def verify(check: Checker, server, inspector: Inspector, accounts: list[Account], credited_total: int, clients: list[Client],
                 ops: int, took: float, events: list[str], rng: random.Random) -> None:
    """Every claim of the checker (the module's description) against the final database and the API at `server.port`,
    after `ops` operations of `clients` that took `took` seconds with `events` (the faults) meanwhile."""
    port = server.port
    acknowledged = [a for c in clients for a in c.acknowledged]
    refused = sum(c.refused for c in clients)
    log(f"  {ops} operations by {len(clients)} clients in {took:.1f}s: {len(acknowledged)} acknowledged, {refused} refused "
        f"for want of money, {sum(c.retries for c in clients)} retries ({'; '.join(events) or 'undisturbed'})")
    for client in clients:
        for problem in client.unexpected[:3]:
            check.expect(False, f"client {client.index}: unexpected answer {problem}")
    check.expect(len(acknowledged) > ops // 4, f"only {len(acknowledged)} of {ops} operations moved money: the load did not run")

    # 1-2. Money is conserved and nobody is overdrawn.
    people = int(inspector.scalar("SELECT COALESCE(SUM(balance), 0) FROM wallets WHERE kind = 'person'"))
    everyone = int(inspector.scalar("SELECT COALESCE(SUM(balance), 0) FROM wallets"))
    topups = [t for c in clients for t in c.topups]
    refunds = [r for c in clients for r in c.refunds]
    paid_in = sum(t["amount"] for t in topups)
    given_back = sum(r["amount"] for r in refunds)
    log(f"  {len(topups)} top-ups paid through the provider ({paid_in} kopecks), {len(refunds)} given back ({given_back}), "
        f"{sum(c.refunds_refused for c in clients)} refunds refused (the money was spent)")
    check.expect(people == credited_total + paid_in - given_back,
                 f"people's balances sum to {people}; {credited_total} was credited, {paid_in} topped up, {given_back} refunded")
    check.expect(everyone == 0, f"all balances (with the system wallet) sum to {everyone}, not 0")
    negative = inspector.rows("SELECT id, balance FROM wallets WHERE kind = 'person' AND balance < 0")
    check.expect(not negative, f"negative balances: {negative[:5]}")

    # 3. The ledger's movements between people are exactly the acknowledged ones, once each.
    rows = inspector.rows("""
        SELECT t.id, t.amount, d.account_id, c.account_id, e.balance_after FROM ledger_transactions t
        JOIN wallets d ON d.id = t.debit_wallet_id JOIN wallets c ON c.id = t.credit_wallet_id
        JOIN ledger_entries e ON e.transaction_id = t.id AND e.wallet_id = t.debit_wallet_id
        WHERE t.kind NOT IN ('topup', 'reversal')""")
    ledger = {}
    for tid, amount, payer, payee, after in rows:
        key = norm(tid)
        check.expect(key not in ledger, f"transaction {tid} read twice")
        ledger[key] = (int(amount), norm(payer), norm(payee), int(after))
    told = {}
    for ack in acknowledged:
        key = norm(ack["id"])
        check.expect(key not in told, f"two intents were told the same transfer {ack['id']}")
        told[key] = ack
    missing = [k for k in told if k not in ledger]
    extra = [k for k in ledger if k not in told]
    check.expect(not missing, f"{len(missing)} acknowledged transfers are not in the ledger: {missing[:3]}")
    check.expect(not extra, f"{len(extra)} transfers in the ledger nobody was told about (a retry applied twice, "
                            f"or a refused one applied): {extra[:3]}")
    wrong = []
    for key, ack in told.items():
        if key in ledger:
            amount, payer, payee, after = ledger[key]
            if (amount, payer, payee) != (ack["amount"], norm(ack["from"]), norm(ack["to"])):
                wrong.append(key)
            # 6a. The balance the payer was told is the one the ledger recorded after this movement.
            check.expect(after == ack["balance"], f"transfer {key}: the payer was told balance {ack['balance']}, the ledger says {after}")
    check.expect(not wrong, f"{len(wrong)} transfers differ from what was asked: {wrong[:3]}")
    paid = [a for a in acknowledged if a["state"] is not None]
    check.expect(all(a["state"] == "paid" for a in paid), "a confirmed request not answered as paid")
    unpaid = inspector.scalar("SELECT COUNT(*) FROM money_requests WHERE state = 'paid' AND payment_id IS NULL")
    check.expect(unpaid == "0", f"{unpaid} paid requests without their payment")
    check.expect(int(inspector.scalar("SELECT COUNT(*) FROM money_requests WHERE state = 'paid'")) == len(paid),
                 "the paid requests are not the confirmed ones")

    # 3b. Each top-up paid is one movement into its wallet, with its amount; each refund one movement back.
    provider_credits = {norm(tid): (int(amount), norm(account)) for tid, amount, account in inspector.rows("""
        SELECT t.id, t.amount, w.account_id FROM ledger_transactions t JOIN wallets w ON w.id = t.credit_wallet_id
        WHERE t.kind = 'topup' AND t.reference LIKE 'local:%'""")}
    told_topups = {norm(t["transfer"]): (t["amount"], norm(t["account"])) for t in topups}
    check.expect(provider_credits == told_topups, f"the provider's credits in the ledger ({len(provider_credits)}) are not the top-ups paid "
                                                  f"({len(told_topups)}): {len(set(provider_credits.items()) ^ set(told_topups.items()))} differ")
    reversed_total = int(inspector.scalar("SELECT COALESCE(SUM(amount), 0) FROM ledger_transactions WHERE kind = 'reversal'"))
    check.expect(reversed_total == given_back, f"refunds moved {reversed_total} back, {given_back} was refunded")
    counted = int(inspector.scalar("SELECT COALESCE(SUM(refunded), 0) FROM wallet_topups"))
    check.expect(counted == given_back, f"the top-ups count {counted} refunded, {given_back} was")

    # 4. No key moved money twice: each stored answer names one movement, no movement two keys.
    keyed = inspector.rows("SELECT key, body FROM idempotency_keys WHERE status IN (200, 201) AND (key LIKE 't-%' OR key LIKE 'c-%')")
    named = defaultdict(list)
    for key, body in keyed:
        parsed = json.loads(body)
        tid = (parsed.get("transfer") or {}).get("id") or parsed.get("id")
        named[norm(tid)].append(key)
    check.expect(all(len(v) == 1 for v in named.values()), "one movement stored for two keys")
    check.expect(set(named) == set(ledger), f"stored answers and movements differ: {len(set(named) ^ set(ledger))}")

    # 5. The ledger's own invariants, by the operator's command.
    audit = subprocess.run([gatehouse_binary(), "wallet", "audit"], cwd=server.workdir, env=server.env(),
                           capture_output=True, text=True, timeout=120)
    check.expect(audit.returncode == 0 and "ledger ok" in audit.stdout, f"gatehouse wallet audit: {audit.stdout.strip()[:300]} {audit.stderr.strip()[:200]}")

    # 6b. Each account's history over the API is its entries in the ledger.
    entries = defaultdict(int)
    for account_id, count in inspector.rows("SELECT w.account_id, COUNT(*) FROM ledger_entries e JOIN wallets w ON w.id = e.wallet_id "
                                            "WHERE w.kind = 'person' GROUP BY w.account_id"):
        entries[norm(account_id)] = int(count)
    for account in rng.sample(accounts, min(10, len(accounts))):
        seen, cursor, balance = 0, None, None
        while True:
            answer = await http("GET", port, "/v1/wallet/transactions?limit=200" + (f"&cursor={cursor}" if cursor else ""), token=account.token)
            check.expect(answer.status == 200, f"history: {answer.status}")
            page = answer.json()
            if balance is None and page["items"]:
                balance = page["items"][0]["balanceAfter"]
            seen += len(page["items"])
            cursor = page.get("nextCursor")
            if not cursor:
                break
        wallet = (await http("GET", port, "/v1/wallet", token=account.token)).json()
        check.expect(seen == entries[norm(account.id)], f"{account.tag}: the API shows {seen} movements, the ledger has {entries[norm(account.id)]}")
        check.expect(balance == wallet["balance"], f"{account.tag}: the newest movement's balance {balance} is not the wallet's {wallet['balance']}")
    if inspector.engine == "sqlite":
        check.expect(inspector.rows("PRAGMA integrity_check") == [["ok"]], "sqlite integrity_check failed")
    check.figures.update({"ops": ops, "clients": len(clients), "accounts": len(accounts), "acknowledged": len(acknowledged), "refused": refused,
                          "topups": len(topups), "refunds": len(refunds),
                          "retries": sum(c.retries for c in clients), "keys_retried": sum(c.keys_retried for c in clients), "duplicates": sum(c.duplicates for c in clients),
                          "ops_per_s": f"{ops / max(took, 0.001):.0f}", "faults": "; ".join(events) or "none"})
