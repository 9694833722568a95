#!/usr/bin/env python3
"""Runs the fault tests (docs/reliability.md#faults). Normally started by Faults/run.sh, which
also starts and stops the harness's own PostgreSQL on port 55433.

  python3 Faults/faults.py [--only crash,messages,mail,pg-restart,two-instances,ledger,known,soak] [--engines sqlite,pg]

A test in --only may name its engine, `crash@sqlite`: it then runs on that engine alone (CI runs each test on the
engine where its fault bites; the full check runs every test on both).

`ledger` is the ledger checker undisturbed and then under faults; `ledger-faults` the second run alone (CI's).

`soak` (not in the default set) is the mixed-load soak of Faults/soak.py, SOAK_SECONDS per engine (600).

`fleet` (not in the default set) starts the whole fleet of Faults/fleet.py (three instances behind HAProxy, PgBouncer,
Redis, a PostgreSQL primary and its synchronous standby, ports 19280-19288) and takes its parts away one by one under
load (Faults/test_fleet.py). It needs haproxy, pgbouncer and redis-server besides PostgreSQL.

Exit status 0 only when every test passed. FAULTS_SEED repeats a run's random choices.
`known` reproduces known server issues: they are reported (KNOWN ...) but do not count, unless
FAULTS_STRICT=1.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import FaultsPostgres, Inspector, Result, log, seed_from_env, strict, workdir  # noqa: E402
import test_crash  # noqa: E402
import test_mail  # noqa: E402
import test_pg_restart  # noqa: E402
import test_two_instances  # noqa: E402
import test_messages  # noqa: E402
import test_ledger  # noqa: E402
import test_fleet  # noqa: E402
import soak  # noqa: E402
import known_db_away_pool_wait  # noqa: E402
import known_mail_stall_delays_sms  # noqa: E402

TESTS = ("crash", "messages", "mail", "pg-restart", "two-instances", "ledger", "ledger-faults", "known", "soak", "fleet")
DEFAULT_TESTS = ("crash", "messages", "mail", "pg-restart", "two-instances", "ledger", "known")   # the soak and the fleet run when asked for


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default=",".join(DEFAULT_TESTS))
    parser.add_argument("--engines", default=os.environ.get("FAULTS_ENGINES", "sqlite,pg"))
    args = parser.parse_args()
    # "crash@sqlite": that test on that engine alone; a bare name: on every engine of --engines.
    pinned: dict[str, set[str]] = {}
    only = []
    for item in (t for t in args.only.split(",") if t):
        name, _, engine = item.partition("@")
        only.append(name)
        if engine:
            pinned.setdefault(name, set()).add(engine)
    engines = [e for e in args.engines.split(",") if e]
    unknown = ([t for t in only if t not in TESTS] + [e for e in engines if e not in ("sqlite", "pg")]
               + [e for pins in pinned.values() for e in pins if e not in ("sqlite", "pg")])
    if unknown:
        parser.error(f"unknown: {unknown}")

    seed = seed_from_env()
    log(f"faults: seed={seed} (FAULTS_SEED={seed} repeats the random choices), tests={only}, engines={engines}")
    pg = FaultsPostgres()
    results: list[Result] = []
    if "pg" in engines and not pg.enabled:
        results.append(Result("postgres", False, {}, [f"the faults PostgreSQL on port {pg.port} is not running "
                                                      "(Faults/run.sh starts it)"]))
        engines = [e for e in engines if e != "pg"]
    started = time.monotonic()
    tag = f"{os.getpid()}"

    def sqlite_target(name: str):
        path = os.path.join(workdir(f"faults-{name}-db"), "gatehouse.sqlite")
        return path, Inspector("sqlite", sqlite_path=path), None

    def pg_target(name: str):
        database = f"faults_{name}_{tag}"
        url = pg.create_database(database)
        return url, Inspector("pg", pg=pg, pg_database=database), database

    def engines_of(name: str) -> list[str]:
        # `ledger@pg` pins both ledger runs (undisturbed and under faults); `ledger-faults@pg` the second alone.
        pins = pinned.get(name) or (pinned.get("ledger") if name == "ledger-faults" else None)
        return [e for e in engines if pins is None or e in pins]

    async def each_engine(name: str, run, ports: dict):
        for index, engine in enumerate(engines):
            if engine not in engines_of(name):
                continue
            log(f"\n== {name} [{engine}]")
            url, inspector, database = (sqlite_target if engine == "sqlite" else pg_target)(name.replace("-", "_"))
            t0 = time.monotonic()
            result = await run(engine, url, inspector, ports[engine], seed + index)
            result.figures["took_s"] = f"{time.monotonic() - t0:.1f}"
            log(result.line())
            results.append(result)
            if database:
                pg.drop_database(database)

    if "crash" in only:
        await each_engine("crash", test_crash.run, {"sqlite": 19201, "pg": 19202})
    if "messages" in only:
        await each_engine("messages", test_messages.run, {"sqlite": 19240, "pg": 19241})
    if "ledger" in only or "ledger-faults" in only:
        # The ledger checker: undisturbed, then with kill -9 and (on PostgreSQL) a database restart.
        runs = ((False, {"sqlite": 19270, "pg": 19271}), (True, {"sqlite": 19272, "pg": 19273}))
        for faults, ports in runs if "ledger" in only else runs[1:]:
            async def ledger(engine, url, inspector, port, run_seed, faults=faults):
                return await test_ledger.run(engine, url, inspector, port, run_seed, faults, pg)
            await each_engine("ledger-faults" if faults else "ledger", ledger, ports)
    if "mail" in only:
        await each_engine("mail", test_mail.run, {"sqlite": 19210, "pg": 19215})
    if "pg-restart" in only:
        if "pg" in engines:
            log("\n== pg-restart [pg]")
            url, inspector, database = pg_target("pg_restart")
            t0 = time.monotonic()
            result = await test_pg_restart.run(pg, url, inspector, 19220, seed)
            result.figures["took_s"] = f"{time.monotonic() - t0:.1f}"
            log(result.line())
            results.append(result)
            pg.drop_database(database)
        else:
            log("\n== pg-restart: skipped (PostgreSQL only, --engines has no pg)")
    if "two-instances" in only:
        if "pg" in engines:
            log("\n== two-instances [pg]")
            url, inspector, database = pg_target("two_instances")
            t0 = time.monotonic()
            result = await test_two_instances.run(url, (19230, 19231), seed)
            result.figures["took_s"] = f"{time.monotonic() - t0:.1f}"
            log(result.line())
            results.append(result)
            pg.drop_database(database)
        else:
            log("\n== two-instances: skipped (PostgreSQL only, --engines has no pg)")

    if "soak" in only:
        seconds = float(os.environ.get("SOAK_SECONDS", "600"))
        for engine, port in (("sqlite", 19260), ("pg", 19261)):
            if engine not in engines_of("soak"):
                continue
            log(f"\n== soak [{engine}], {seconds:.0f} s")
            t0 = time.monotonic()
            result = await soak.run(engine, seconds, pg if engine == "pg" else None, port)
            result.figures["took_s"] = f"{time.monotonic() - t0:.1f}"
            log(result.line())
            results.append(result)

    if "fleet" in only:
        log("\n== fleet [pg]")
        t0 = time.monotonic()
        result = await test_fleet.run(seed)
        result.figures["took_s"] = f"{time.monotonic() - t0:.1f}"
        log(result.line())
        results.append(result)

    known: list[Result] = []
    if "known" in only:
        for title, module, port in (("a stalled mail server delays SMS codes", known_mail_stall_delays_sms, 19250),
                                    ("requests wait for a pooled connection while the database is away",
                                     known_db_away_pool_wait, 19252)):
            log(f"\n== known server issue: {title}")
            t0 = time.monotonic()
            result = await module.run(port)
            result.figures["took_s"] = f"{time.monotonic() - t0:.1f}"
            if strict():
                log(result.line())
                results.append(result)
            else:
                log(f"KNOWN {result.name}: {'still there' if not result.passed else 'passes now'}")
                known.append(result)

    failed = [r for r in results if not r.passed]
    log(f"\n== summary ({time.monotonic() - started:.0f}s, seed={seed})")
    for r in results:
        log(r.line())
        for problem in r.problems[:20]:
            log(f"    - {problem}")
    for r in known:
        state = "still there" if not r.passed else "FIXED? it passes now: make it a counted test"
        log(f"KNOWN {r.name} ({state}, not counted; FAULTS_STRICT=1 counts it): "
            + " ".join(f"{k}={v}" for k, v in r.figures.items()))
    for r in results:
        for note in r.known:
            log(f"KNOWN seen in {r.name} (not counted; FAULTS_STRICT=1 counts it): {note}")
    log(f"faults: {len(results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed or not results else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
