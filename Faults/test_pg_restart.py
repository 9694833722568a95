"""Fault 3, database restart under load (PostgreSQL): while 8 workers read (`GET /api/users/user`,
`GET /v1/me` with a token) and log in, the harness's PostgreSQL is stopped for OUTAGE_S seconds
and started again. Every request must be answered (errors are fine while the database is away,
hangs are not), `/health` must say 503 meanwhile, and within RECOVERY_LIMIT_S of the database
being back requests succeed again, with the same gatehouse process (no restart of its own).

A request unanswered after HANG_S is a hang: a failure. One answered, but after TIMEOUT_S (the
client budget of the issue), is slow: today that is the known pool-wait issue
(known_db_away_pool_wait.py; requests queued for a pooled connection wait until the database is
back or 10 s), reported as known and counted as a failure only with FAULTS_STRICT=1.

Two cycles: `pg_ctl stop -m fast` (clean shutdown, backends told to quit) and `-m immediate`
(backends killed, crash recovery on start).
"""
from __future__ import annotations

import asyncio
import os
from collections import Counter
from dataclasses import dataclass

from common import (Checker, FaultsPostgres, Gatehouse, Hang, Inspector, NoAnswer, NotSent, Result, http, log, median,
                    ms, now, outbox_code, workdir)

WORKERS = 8
TIMEOUT_S = 5.0     # the client's budget: an answer after it is "slow"
HANG_S = 15.0       # no answer after this is a hang (the server's pool timeout is 10 s)
BASELINE_S = 2.0
OUTAGE_S = 6.0
RECOVERY_LIMIT_S = 10.0
STEADY_S = 3.0
# PG_RESTART_MODES: the cycles to run (CI runs `immediate`, the harsher, alone; the full check both).
MODES = tuple(m for m in os.environ.get("PG_RESTART_MODES", "fast,immediate").split(",") if m in ("fast", "immediate")) or ("fast", "immediate")


@dataclass
class Sample:
    start: float
    end: float
    kind: str
    outcome: str   # ok | http NNN | hang | no-answer | not-sent

    @property
    def ok(self) -> bool:
        return self.outcome == "ok"

    @property
    def slow(self) -> bool:
        return self.outcome != "hang" and self.end - self.start > TIMEOUT_S


class Traffic:
    def __init__(self, port: int, accounts: list):
        self.port = port
        self.accounts = accounts
        self.samples: list[Sample] = []
        self.health: list[Sample] = []
        self.stop = False

    async def one(self, kind: str, account: dict) -> Sample:
        start = now()
        try:
            if kind == "user":
                answer = await http("GET", self.port, "/api/users/user", token=account["token"], timeout=HANG_S)
                outcome = "ok" if answer.status == 200 else f"http {answer.status}"
                if answer.status == 503 and (answer.headers.get("retry-after") != "1" or answer.headers.get("x-error-code") != "service_unavailable"):
                    outcome = f"http 503 without Retry-After 1 and X-Error-Code service_unavailable: {answer.headers}"
            elif kind == "me":
                answer = await http("GET", self.port, "/v1/me", token=account["token"], timeout=HANG_S)
                outcome = "ok" if answer.status == 200 else f"http {answer.status}"
                # The database away: a problem document with its code and when to try again.
                if answer.status == 503 and (answer.headers.get("retry-after") != "1" or answer.json().get("code") != "service_unavailable"):
                    outcome = f"http 503 without Retry-After 1 and service_unavailable: {answer.headers.get('retry-after')} {answer.text[:80]}"
            else:
                answer = await http("POST", self.port, "/v1/sessions", timeout=HANG_S,
                                    json_body={"identifier": account["email"], "password": account["password"]})
                outcome = "ok" if answer.status == 201 else f"http {answer.status}"
        except Hang:
            outcome = "hang"
        except NoAnswer:
            outcome = "no-answer"
        except NotSent:
            outcome = "not-sent"
        return Sample(start, now(), kind, outcome)

    async def worker(self, index: int) -> None:
        n = 0
        while not self.stop:
            n += 1
            kind = "login" if n % 10 == 0 else ("me" if n % 5 == 0 else "user")
            self.samples.append(await self.one(kind, self.accounts[(index + n) % len(self.accounts)]))
            await asyncio.sleep(0.02)

    async def health_poller(self) -> None:
        while not self.stop:
            start = now()
            try:
                answer = await http("GET", self.port, "/health", timeout=HANG_S)
                outcome = "ok" if answer.status == 200 else f"http {answer.status}"
            except Hang:
                outcome = "hang"
            except (NoAnswer, NotSent):
                outcome = "no-answer"
            self.health.append(Sample(start, now(), "health", outcome))
            await asyncio.sleep(0.25)


def summary(samples: list) -> str:
    outcomes = Counter(s.outcome for s in samples)
    latencies = [s.end - s.start for s in samples]
    return (f"n={len(samples)} " + " ".join(f"{k}={v}" for k, v in sorted(outcomes.items()))
            + f" p50={ms(median(latencies))} max={ms(max(latencies) if latencies else None)}")


async def cycle(pg: FaultsPostgres, server: Gatehouse, accounts: list, mode: str, check: Checker) -> dict:
    traffic = Traffic(server.port, accounts)
    tasks = [asyncio.create_task(traffic.worker(i)) for i in range(WORKERS)]
    tasks.append(asyncio.create_task(traffic.health_poller()))
    await asyncio.sleep(BASELINE_S)
    t_stop = now()
    await asyncio.to_thread(pg.stop, mode)
    t_down = now()
    check.expect(not pg.ready(), f"[{mode}] PostgreSQL still answers after pg_ctl stop")
    try:   # liveness is not readiness: an outage is no reason to restart the process
        live = (await http("GET", server.port, "/health/live", timeout=TIMEOUT_S)).status
    except NoAnswer:
        live = "no answer"
    check.expect(live == 200, f"[{mode}] /health/live answered {live} while the database was away (want 200)")
    await asyncio.sleep(max(0.0, OUTAGE_S - (t_down - t_stop)))
    t_start = now()
    await asyncio.to_thread(pg.start)
    t_up = now()
    # Run until RECOVERY_LIMIT_S after the restart, or until STEADY_S of steady success after the last failure.
    while now() - t_up < RECOVERY_LIMIT_S + STEADY_S:
        await asyncio.sleep(0.2)
        recent = [s for s in traffic.samples if s.start >= t_up]
        failures = [s for s in recent if not s.ok]
        last_failure = max((s.end for s in failures), default=t_up)
        if any(s.ok for s in recent) and now() - last_failure >= STEADY_S:
            break
    traffic.stop = True
    await asyncio.gather(*tasks)

    before = [s for s in traffic.samples if s.start < t_stop]
    outage = [s for s in traffic.samples if t_stop <= s.start < t_up]
    after = [s for s in traffic.samples if s.start >= t_up]
    # Requests begun before the stop may fail if they were still running when it came.
    check.expect(all(s.ok or s.end >= t_stop for s in before), f"[{mode}] failures before the outage: {summary(before)}")
    every = before + outage + after
    hangs = [s for s in every + traffic.health if s.outcome == "hang"]
    check.expect(not hangs, f"[{mode}] {len(hangs)} request(s) got no answer within {HANG_S:.0f}s "
                            f"(first began {hangs[0].start - t_stop:+.1f}s from the stop)" if hangs else "")
    slow = [s for s in every + traffic.health if s.slow]
    check.known_issue(not slow, f"[{mode}] {len(slow)} request(s) answered only after {TIMEOUT_S:.0f}s "
                                f"({', '.join(f'{s.kind} {s.outcome} in {s.end - s.start:.1f}s' for s in slow[:4])}): "
                                f"the pool-wait issue, see known_db_away_pool_wait.py" if slow else "")
    dropped = [s for s in every if s.outcome in ("no-answer", "not-sent")]
    check.expect(not dropped, f"[{mode}] {len(dropped)} request(s) had the connection closed without an answer")
    unauthorized = [s for s in outage + after if s.outcome == "http 401"]
    check.expect(not unauthorized, f"[{mode}] {len(unauthorized)} valid token(s) answered 401 while the database was "
                                   f"away (clients would sign the user out)")
    # A database away is a 503 (`service_unavailable`, retry), never a 500: clients retry one and report the other.
    internal = [s for s in outage + after if s.outcome == "http 500"]
    check.expect(not internal, f"[{mode}] {len(internal)} request(s) answered 500 while the database was away (want 503)")
    bare = [s.outcome for s in outage + after if s.outcome.startswith("http 503 without")]
    check.expect(not bare, f"[{mode}] {len(bare)} 503(s) without their Retry-After and code: {bare[:2]}")
    outage_ok = [s for s in outage if s.ok]
    outage_health = [h for h in traffic.health if t_down <= h.start and h.end < t_start]
    check.expect(outage_health and all(h.outcome == "http 503" for h in outage_health),
                 f"[{mode}] /health during the outage: {Counter(h.outcome for h in outage_health)} (want all 503)")
    first_ok = min((s.end for s in after if s.ok), default=None)
    failures_after = [s for s in after if not s.ok]
    last_failure = max((s.end for s in failures_after), default=None)
    recovered_in = (last_failure - t_up) if last_failure is not None else 0.0
    check.expect(first_ok is not None and recovered_in <= RECOVERY_LIMIT_S,
                 f"[{mode}] not recovered within {RECOVERY_LIMIT_S:.0f}s of the database's return: {summary(after)}")
    steady = [s for s in after if s.start > (last_failure or t_up)]
    check.expect(len(steady) > 0 and all(s.ok for s in steady), f"[{mode}] no steady success after recovery")
    final_health = [h for h in traffic.health if h.start > (last_failure or t_up)]
    check.expect(final_health and final_health[-1].ok, f"[{mode}] /health not 200 after recovery")
    check.expect(server.alive() and server.starts == 1, f"[{mode}] gatehouse died or was restarted")

    log(f"  [{mode}] before : {summary(before)}")
    log(f"  [{mode}] outage : {summary(outage)} (database down {t_start - t_down:.1f}s; {len(outage_ok)} ok while it stopped)")
    log(f"  [{mode}] after  : {summary(after)}")
    log(f"  [{mode}] /health during outage: {dict(Counter(h.outcome for h in outage_health))}; "
        f"first success {ms(first_ok - t_up if first_ok else None)} after start, all succeed from {ms(recovered_in)}")
    outage_latencies = [s.end - s.start for s in outage]
    return {
        f"{mode}_db_down_s": f"{t_start - t_down:.1f}",
        f"{mode}_outage_requests": len(outage),
        f"{mode}_outage_max_latency": ms(max(outage_latencies) if outage_latencies else None),
        f"{mode}_hangs": len(hangs),
        f"{mode}_slow_over_5s": len(slow),
        f"{mode}_first_ok": ms(first_ok - t_up if first_ok else None),
        f"{mode}_all_ok_from": ms(recovered_in),
    }


async def run(pg: FaultsPostgres, database_url: str, inspector: Inspector, port: int, seed: int) -> Result:
    check = Checker("pg-restart[pg]")
    work = workdir("faults-pg-restart")
    server = Gatehouse("pg-restart", port, database_url, work)
    try:
        await server.start()
        accounts = []
        for i in range(WORKERS):
            address = f"reader{i}@restart.faults.test"
            await http("POST", port, "/v1/signup/code", json_body={"email": address})
            code = await outbox_code(port, address)
            answer = await http("POST", port, "/v1/signup", json_body={"email": address, "code": code, "password": "Restart-1!"})
            assert answer.status == 201, answer.text
            accounts.append({"email": address, "password": "Restart-1!", "token": answer.json()["token"]})
        for mode in MODES:
            check.figures.update(await cycle(pg, server, accounts, mode, check))
    except Exception as error:
        check.expect(False, f"harness error: {type(error).__name__}: {error}")
    finally:
        if not pg.ready():
            try:
                pg.start()
            except Exception as error:
                check.expect(False, f"could not start PostgreSQL again: {error}")
        server.stop()
    return check.result()
