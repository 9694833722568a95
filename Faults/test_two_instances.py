"""Fault 4, two instances on one PostgreSQL: a session revoked on instance A is refused on
instance B within one second. B is polled every POLL_S with the token while A revokes it.

Passes when B lets through no request begun LIMIT_S or more after the revocation (and some were
made), A itself refuses the token at once, and once B has refused it refuses for good (no
flapping). Two figures per revocation: `accepted` is how long after the revocation the last
request B still accepted began (a lower bound of the propagation time), and `refused` is when B's
first refusal arrived (an upper bound, which includes B's answer time). Each instance caches
sessions for GATEHOUSE_SESSION_CACHE_SECONDS (0.5 s by default; what it changes itself it forgets
at once), so B is expected to accept the token for up to that TTL after the revocation.

Revocation paths, each REPEAT times:
  logout-v1       DELETE /v1/sessions/current on A
  logout-api      POST /api/auth/logout on A (B polls GET /api/users/user)
  end-session     DELETE /v1/sessions/{id} from another session of the account, on A
  end-others      DELETE /v1/sessions?scope=others on A: the other session dies, the caller's lives
  password-change POST /v1/me/password on A: every other session ends
"""
from __future__ import annotations

import asyncio
import os
import random

from common import Checker, Gatehouse, NoAnswer, NotSent, Result, http, log, median, ms, now, outbox_code, workdir

POLL_S = 0.02
LIMIT_S = 1.0
WINDOW_S = 1.5
# Each path this many times (TWO_INSTANCES_REPEAT; CI: 1, the full check: 3).
REPEAT = int(os.environ.get("TWO_INSTANCES_REPEAT", "3"))
PATHS = ("logout-v1", "logout-api", "end-session", "end-others", "password-change")


async def login(port: int, identifier: str, password: str) -> dict:
    answer = await http("POST", port, "/v1/sessions", json_body={"identifier": identifier, "password": password})
    assert answer.status == 201, f"login on {port}: {answer.status} {answer.text[:200]}"
    return answer.json()


async def authorized(port: int, token: str, surface: str) -> int:
    path = "/api/users/user" if surface == "api" else "/v1/me"
    return (await http("GET", port, path, token=token, timeout=5)).status


async def measure(a: int, b: int, victim: str, surface: str, revoke, check: Checker, label: str,
                  pause: float) -> tuple[float, float] | None:
    """Polls B with `victim` while `revoke()` runs on A, `pause` seconds after polling began (so the
    revocation lands anywhere in B's cache window); returns (accepted, refused) in seconds."""
    check.expect(await authorized(b, victim, surface) == 200, f"{label}: the token from A does not work on B")
    polls: list[tuple[float, float, int]] = []
    revoked_at = None
    stop = False

    async def poll() -> None:
        while not stop:
            start = now()
            try:
                status = await authorized(b, victim, surface)
            except (NoAnswer, NotSent):
                status = -1
            polls.append((start, now(), status))
            await asyncio.sleep(POLL_S)

    poller = asyncio.create_task(poll())
    await asyncio.sleep(pause)
    revoke_started = now()
    await revoke()
    revoked_at = now()
    on_a = await authorized(a, victim, surface)   # right away: A forgets its own revocations at once
    await asyncio.sleep(WINDOW_S)
    stop = True
    await poller

    check.expect(on_a == 401, f"{label}: A itself still answers {on_a} for the token it revoked")
    after = [(s, e, st) for s, e, st in polls if e >= revoked_at]
    first_refusal = next((e for s, e, st in after if st == 401), None)
    check.expect(first_refusal is not None, f"{label}: B never refused the revoked token: "
                                            f"{[st for _, _, st in after][:10]}")
    if first_refusal is None:
        return None
    latency = max(0.0, first_refusal - revoked_at)
    late = [(s - revoked_at, st) for s, e, st in polls if s >= revoked_at + LIMIT_S]
    check.expect(late, f"{label}: B got no request begun {ms(LIMIT_S)} after the revocation (too slow to tell)")
    late_ok = [t for t, st in late if st != 401]
    check.expect(not late_ok, f"{label}: B let through {len(late_ok)} request(s) begun {ms(LIMIT_S)} or more "
                              f"after the revocation")
    accepted = max((s - revoked_at for s, e, st in polls if s >= revoked_at and st == 200), default=0.0)
    flapping = [s - revoked_at for s, e, st in polls if s >= first_refusal and st != 401]
    check.expect(not flapping, f"{label}: B accepted the token again after refusing it ({len(flapping)} time(s))")
    check.expect(all(st in (200, 401) for _, _, st in polls), f"{label}: odd answers on B: {set(st for *_, st in polls)}")
    accepted_after = sum(1 for s, e, st in polls if s >= revoked_at and st == 200)
    log(f"  {label}: revoke took {ms(revoked_at - revoke_started)} on A; B still accepted a request begun "
        f"{ms(accepted)} after it ({accepted_after} in all), first refusal {ms(latency)} after; {len(polls)} polls on B")
    return accepted, latency


async def run(database_url: str, ports: tuple, seed: int) -> Result:
    check = Checker("two-instances[pg]")
    a_port, b_port = ports
    work = workdir("faults-two")
    a = Gatehouse("instance-a", a_port, database_url, work)
    b = Gatehouse("instance-b", b_port, database_url, work)
    latencies: dict[str, list] = {p: [] for p in PATHS}
    rng = random.Random(seed)
    try:
        await a.start()
        await b.start()
        address, password = "two@instances.faults.test", "Two-inst-1!"
        await http("POST", a_port, "/v1/signup/code", json_body={"email": address})
        code = await outbox_code(b_port, address)   # A wrote it, B reads it: one database
        answer = await http("POST", b_port, "/v1/signup", json_body={"email": address, "code": code, "password": password})
        assert answer.status == 201, answer.text
        for round_no in range(1, REPEAT + 1):
            for path in PATHS:
                label = f"{path} #{round_no}"
                if path == "logout-v1":
                    victim = (await login(a_port, address, password))["token"]

                    async def revoke(v=victim):
                        r = await http("DELETE", a_port, "/v1/sessions/current", token=v)
                        assert r.status == 204, r.status
                    latency = await measure(a_port, b_port, victim, "v1", revoke, check, label, rng.uniform(0.05, 0.6))
                elif path == "logout-api":
                    r = await http("POST", a_port, "/api/auth/login", form={"login": address, "password": password})
                    victim = r.json()["token"]

                    async def revoke(v=victim):
                        r = await http("POST", a_port, "/api/auth/logout", token=v)
                        assert r.status == 200, r.status
                    latency = await measure(a_port, b_port, victim, "api", revoke, check, label, rng.uniform(0.05, 0.6))
                elif path in ("end-session", "end-others"):
                    keeper = (await login(a_port, address, password))["token"]
                    victim_session = await login(b_port, address, password)   # issued by B this time
                    victim = victim_session["token"]

                    async def revoke(k=keeper, sid=victim_session["sessionId"], p=path):
                        if p == "end-session":
                            r = await http("DELETE", a_port, f"/v1/sessions/{sid}", token=k)
                            assert r.status == 204, r.status
                        else:
                            r = await http("DELETE", a_port, "/v1/sessions?scope=others", token=k)
                            assert r.status == 200, r.status
                    latency = await measure(a_port, b_port, victim, "v1", revoke, check, label, rng.uniform(0.05, 0.6))
                    check.expect(await authorized(b_port, keeper, "v1") == 200, f"{label}: the caller's own session died")
                    await http("DELETE", a_port, "/v1/sessions/current", token=keeper)
                else:
                    keeper = (await login(a_port, address, password))["token"]
                    victim = (await login(a_port, address, password))["token"]
                    new_password = f"Two-inst-{round_no + 1}!"

                    async def revoke(k=keeper, old=password, new=new_password):
                        r = await http("POST", a_port, "/v1/me/password", token=k,
                                       json_body={"currentPassword": old, "newPassword": new})
                        assert r.status == 204, (r.status, r.text)
                    latency = await measure(a_port, b_port, victim, "v1", revoke, check, label, rng.uniform(0.05, 0.6))
                    password = new_password
                    check.expect(await authorized(b_port, keeper, "v1") == 200, f"{label}: the changing session died")
                    await http("DELETE", a_port, "/v1/sessions/current", token=keeper)
                latencies[path].append(latency)
        every = [x for values in latencies.values() for x in values if x is not None]
        accepted = [a for a, _ in every]
        refused = [r for _, r in every]
        check.figures.update({
            "revocations": len(every),
            "accepted_median": ms(median(accepted)),
            "accepted_max": ms(max(accepted) if accepted else None),
            "refused_median": ms(median(refused)),
            "refused_max": ms(max(refused) if refused else None),
        })
    except Exception as error:
        check.expect(False, f"harness error: {type(error).__name__}: {error!r}")
    finally:
        a.stop()
        b.stop()
    return check.result()
