"""`peer.sh prepare`: creates the benchmark user through the peer's own HTTP API, logs in, does the
token-authenticated read once and checks it (200 and the user's email in the body), then prints
one JSON line {"path": ..., "header": ...} for wrk. Standard library only.

Usage: prepare.py allauth|fastapi-users PORT
Exit status 1 with a message on stderr when any step fails.
"""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.parse
import urllib.request

EMAIL = "bench@example.com"
PASSWORD = "Bench-pass-1"


def fail(message: str) -> None:
    print(f"prepare: {message}", file=sys.stderr)
    sys.exit(1)


def request(base: str, method: str, path: str, *, json_body=None, form=None, headers=None):
    data = None
    hdrs = {"Accept": "application/json"}
    if json_body is not None:
        data = json.dumps(json_body).encode()
        hdrs["Content-Type"] = "application/json"
    elif form is not None:
        data = urllib.parse.urlencode(form).encode()
        hdrs["Content-Type"] = "application/x-www-form-urlencoded"
    hdrs.update(headers or {})
    req = urllib.request.Request(base + path, data=data, headers=hdrs, method=method)
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, resp.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode("utf-8", "replace")
    except OSError as err:
        fail(f"{method} {path}: {err}")


def check_read(base: str, path: str, header_name: str, header_value: str) -> None:
    status, body = request(base, "GET", path, headers={header_name: header_value})
    if status != 200 or EMAIL not in body:
        fail(f"authenticated read GET {path} returned {status}, expected 200 with {EMAIL}: {body[:500]}")
    # The same read without the token must be refused, or the benchmark would measure nothing.
    status, _ = request(base, "GET", path)
    if status != 401:
        fail(f"GET {path} without a token returned {status}, expected 401")


def allauth(base: str) -> dict:
    prefix = "/_allauth/app/v1"
    status, body = request(base, "POST", f"{prefix}/auth/signup", json_body={"email": EMAIL, "password": PASSWORD})
    if status not in (200, 400) or (status == 400 and "email" not in body):
        fail(f"signup returned {status}: {body[:500]}")  # 400 = already registered: go on to login
    status, body = request(base, "POST", f"{prefix}/auth/login", json_body={"email": EMAIL, "password": PASSWORD})
    if status != 200:
        fail(f"login returned {status}: {body[:500]}")
    token = json.loads(body).get("meta", {}).get("session_token")
    if not token:
        fail(f"login response has no meta.session_token: {body[:500]}")
    path = f"{prefix}/auth/session"
    check_read(base, path, "X-Session-Token", token)
    return {"path": path, "header": f"X-Session-Token: {token}"}


def fastapi_users(base: str) -> dict:
    status, body = request(base, "POST", "/auth/register", json_body={"email": EMAIL, "password": PASSWORD})
    if status != 201 and not (status == 400 and "REGISTER_USER_ALREADY_EXISTS" in body):
        fail(f"register returned {status}: {body[:500]}")
    status, body = request(base, "POST", "/auth/db/login", form={"username": EMAIL, "password": PASSWORD})
    if status != 200:
        fail(f"login returned {status}: {body[:500]}")
    token = json.loads(body).get("access_token")
    if not token:
        fail(f"login response has no access_token: {body[:500]}")
    path = "/users/me"
    check_read(base, path, "Authorization", f"Bearer {token}")
    return {"path": path, "header": f"Authorization: Bearer {token}"}


def main() -> None:
    if len(sys.argv) != 3 or sys.argv[1] not in ("allauth", "fastapi-users"):
        fail("usage: prepare.py allauth|fastapi-users PORT")
    base = f"http://127.0.0.1:{int(sys.argv[2])}"
    result = allauth(base) if sys.argv[1] == "allauth" else fastapi_users(base)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
