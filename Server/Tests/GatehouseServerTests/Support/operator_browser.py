#!/usr/bin/env python3
"""The operator console in headless Chromium (Debian's chromium and chromedriver, driven by
Selenium) against a `gatehouse serve` process, with operators made by `gatehouse operators create`.
An admin signs in with password and TOTP (RFC 6238, computed here as an authenticator app does),
finds a person by phone, ends their sessions (their token is 401 next), locks them (their login is
refused), credits and reverses a top-up with reasons, previews and applies a client import, reads
the outbox (never a code) and the audit trail (each action with its actor and reason). A support
operator cannot credit, a read-only one cannot act; a form without its CSRF token, a person's
session as an operator's and an operator's as a person's are refused. Screenshots go to
--screenshots. Exits 0 when every step was seen."""
import base64
import hmac
import json
import os
import signal
import struct
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

from selenium.webdriver.common.by import By

import browser_session
from browser_session import chromium, free_port, press as press_and_wait, script_arguments, server_env, server_state, start_server

args, work = script_arguments("operators-")


PORT = free_port()
BASE = f"http://127.0.0.1:{PORT}"
ENV = server_env(work, PORT, {"GATEHOUSE_ENV": "development"}, name="g")


def gatehouse(*arguments, stdin=None):
    done = subprocess.run([args.gatehouse, *arguments], cwd=work, env=ENV, input=stdin, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (arguments, done.stdout, done.stderr)
    return done.stdout


def totp(secret, at=None):
    key = base64.b32decode(secret + "=" * ((8 - len(secret) % 8) % 8))
    mac = hmac.new(key, struct.pack(">Q", int((at or time.time()) // 30)), "sha1").digest()
    offset = mac[-1] & 15
    return "%06d" % ((struct.unpack(">I", mac[offset:offset + 4])[0] & 0x7FFFFFFF) % 1000000)


def call(method, path, body=None, token=None, headers=None, raw=None):
    return browser_session.call(BASE, method, path, body=body, token=token, headers=headers, raw=raw)


def code_for(destination):
    return json.loads(call("GET", "/dev/outbox?to=" + urllib.parse.quote(destination) + "&last=1")[2])[0]["code"]


gatehouse("migrate")
server = None
browser = None
step = "setup"
try:
    server = start_server(args.gatehouse, work, ENV, os.path.join(work, "server.log"))

    # A person with a verified phone, a tag and a wallet, signed up through /v1.
    PHONE = "+79123456789"
    call("POST", "/v1/signup/code", {"phone": PHONE})
    status, _, answer = call("POST", "/v1/signup", {"phone": PHONE, "code": code_for(PHONE), "password": "Secret-42!", "tag": "ivan",
                                                     "firstName": "Ivan", "lastName": "Petrov", "locale": "en"})
    assert status == 201, answer
    person = json.loads(answer)["token"]
    status, _, answer = call("POST", "/v1/wallet", token=person)
    assert status == 201, answer

    operators = {}
    for name, role in (("alice", "admin"), ("bob", "support"), ("carol", "read-only")):
        made = json.loads(gatehouse("operators", "create", name, "--role", role, "--as", "root", "--json", stdin=f"Operator-pass-{name}-1\n"))
        assert made["otpauth"].startswith("otpauth://totp/Gatehouse:" + name + "?secret="), made["otpauth"]
        operators[name] = made["secret"]

    browser = chromium("1280,1000")

    def press(element):
        press_and_wait(browser, element)

    def shot(name):
        path = os.path.join(args.screenshots, f"operator-{name}.png")
        browser.save_screenshot(path)
        print(f"screenshot: {path}")

    def fill(element_id, text):
        field = browser.find_element(By.ID, element_id)
        field.clear()
        field.send_keys(text)

    def sign_in(name, code=None):
        browser.delete_all_cookies()
        browser.get(BASE + "/operator")
        assert browser.current_url.endswith("/operator/login"), browser.current_url
        fill("name", name)
        fill("password", f"Operator-pass-{name}-1")
        fill("code", code or totp(operators[name]))
        press(browser.find_element(By.ID, "signin"))

    def cookie_header():
        return "; ".join(f"{c['name']}={c['value']}" for c in browser.get_cookies())

    def csrf():
        return browser.find_element(By.NAME, "csrf").get_attribute("value")

    def open_account(query):
        browser.get(BASE + "/operator")
        fill("query", query)
        press(browser.find_element(By.ID, "find"))
        assert "/operator/accounts/" in browser.current_url, browser.current_url
        return browser.current_url.split("/operator/accounts/")[1].split("?")[0]

    step = "a wrong TOTP code is refused like a wrong password"
    wrong = "%06d" % ((int(totp(operators["alice"])) + 1) % 1000000)
    sign_in("alice", wrong)
    assert "Wrong name, password or code." in browser.find_element(By.ID, "error").text, browser.page_source[:1500]
    shot("1-sign-in-refused")

    step = "the admin signs in with password and TOTP"
    fill("password", "Operator-pass-alice-1")
    fill("code", totp(operators["alice"]))
    press(browser.find_element(By.ID, "signin"))
    assert browser.current_url.endswith("/operator"), browser.current_url
    assert "alice (admin)" in browser.find_element(By.ID, "who").text
    session_cookie = [c for c in browser.get_cookies() if c["name"] == "gh_operator"][0]
    assert session_cookie["httpOnly"] and session_cookie.get("sameSite") == "Strict", session_cookie

    step = "find the person by phone, typed as people type it"
    account = open_account("8 (912) 345-67-89")
    assert PHONE in browser.find_element(By.ID, "phone").text and "(verified)" in browser.find_element(By.ID, "phone").text
    assert "Sessions (1)" in browser.page_source
    assert PHONE not in browser.current_url
    shot("2-account")

    step = "end every session: the person's next request is 401"
    fill("revoke-reason", "phone reported stolen")
    press(browser.find_element(By.ID, "revoke"))
    assert "Every session ended." in browser.find_element(By.ID, "done").text
    assert call("GET", "/v1/me", token=person)[0] == 401

    step = "lock: the person's login is refused, in their surface's words"
    fill("lock-reason", "fraud investigation #42")
    press(browser.find_element(By.ID, "lock"))
    assert "fraud investigation #42" in browser.find_element(By.ID, "locked").text
    status, _, answer = call("POST", "/v1/sessions", {"identifier": PHONE, "password": "Secret-42!"})
    assert status == 403 and json.loads(answer)["code"] == "account_locked", answer
    shot("3-locked")

    step = "credit 500.00 with a reason; the form sent twice credits once"
    fill("amount", "500.00")
    fill("credit-reason", "goodwill for the outage")
    form = browser.find_element(By.ID, "credit").find_element(By.XPATH, "./..")
    fields = {e.get_attribute("name"): e.get_attribute("value") for e in form.find_elements(By.TAG_NAME, "input")}
    press(browser.find_element(By.ID, "credit"))
    assert "The wallet is credited." in browser.find_element(By.ID, "done").text
    assert browser.find_element(By.ID, "balance").text.startswith("500.00"), browser.find_element(By.ID, "balance").text
    status, _, _ = call("POST", f"/operator/accounts/{account}/credit", raw=urllib.parse.urlencode(fields).encode(),
                        headers={"Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie_header()})
    assert status == 303, status
    browser.refresh()
    assert browser.find_element(By.ID, "balance").text.startswith("500.00"), "a repeated form credits once"
    shot("4-credited")

    step = "unlock; the person signs in and sees the credit"
    fill("unlock-reason", "investigation closed")
    press(browser.find_element(By.ID, "unlock"))
    status, _, answer = call("POST", "/v1/sessions", {"identifier": PHONE, "password": "Secret-42!"})
    assert status == 201, answer
    person = json.loads(answer)["token"]
    assert json.loads(call("GET", "/v1/wallet", token=person)[2])["balance"] == 50000

    step = "reverse the top-up with a reason"
    row = browser.find_element(By.CSS_SELECTOR, "#movements tr[data-transfer]")
    row.find_element(By.NAME, "reason").send_keys("credited by mistake")
    press(row.find_element(By.TAG_NAME, "button"))
    assert "The top-up is reversed." in browser.find_element(By.ID, "done").text
    assert browser.find_element(By.ID, "balance").text.startswith("0.00")
    kinds = [t["kind"] for t in json.loads(call("GET", "/v1/wallet/transactions", token=person)[2])["items"]]
    assert kinds == ["reversal", "topup"], kinds

    step = "import client records: a preview first, then applied"
    browser.get(BASE + "/operator/clients")
    records = os.path.join(work, "clients.jsonl")
    with open(records, "w") as f:
        f.write('{"phone":"+79123456789","room":"Room 12","base":"Base North"}\n{"phone":"12"}\n')
    browser.find_element(By.ID, "clients-file").send_keys(records)
    press(browser.find_element(By.ID, "preview"))
    report = browser.find_element(By.ID, "report").text
    assert "Preview" in report and "1 new" in report.replace("\n", " ") and "1 refused" in report, report
    assert "not a phone number" in browser.find_element(By.ID, "refusals").text
    shot("5-import-preview")
    press(browser.find_element(By.ID, "apply"))
    applied = browser.find_element(By.ID, "report").text.replace("\n", " ")
    assert "Imported" in applied and "1 new" in applied, applied
    fill("client-phone", "8 912 345 67 89")
    press(browser.find_element(By.ID, "client-find"))
    assert "Room 12" in browser.find_element(By.ID, "record").text

    step = "the outbox shows what was sent, never a code"
    browser.get(BASE + "/operator/outbox")
    fill("address", PHONE)
    press(browser.find_element(By.ID, "outbox-find"))
    assert PHONE in browser.find_element(By.ID, "messages").text
    signup_code = code_for(PHONE)
    assert signup_code not in browser.page_source, "a code is never shown to an operator"

    step = "the audit page lists each action with actor and reason"
    browser.get(BASE + f"/operator/audit?account={account}")
    trail = browser.find_element(By.ID, "trail").text
    for kind, reason in (("sessions.revoked", "phone reported stolen"), ("account.locked", "fraud investigation #42"),
                         ("wallet.credited", "goodwill for the outage"), ("account.unlocked", "investigation closed"),
                         ("wallet.reversed", "credited by mistake")):
        line = [l for l in trail.split("\n") if kind in l]
        assert line and "operator alice" in line[0] and reason in line[0], (kind, trail)
    assert trail.count("wallet.credited") == 1, trail
    shot("6-audit")

    step = "a support operator cannot credit"
    sign_in("bob")
    assert "bob (support)" in browser.find_element(By.ID, "who").text
    open_account("@ivan")
    assert not browser.find_elements(By.ID, "credit") and browser.find_elements(By.ID, "lock")
    status, _, page = call("POST", f"/operator/accounts/{account}/credit",
                           raw=urllib.parse.urlencode({"csrf": csrf(), "amount": "100", "reason": "try"}).encode(),
                           headers={"Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie_header()})
    assert status == 403 and b"may not do this" in page, (status, page[:300])
    shot("7-support")

    step = "a read-only operator cannot act"
    sign_in("carol")
    open_account(account)
    assert not browser.find_elements(By.ID, "lock") and not browser.find_elements(By.ID, "revoke")
    status, _, _ = call("POST", f"/operator/accounts/{account}/lock",
                        raw=urllib.parse.urlencode({"csrf": csrf(), "reason": "try"}).encode(),
                        headers={"Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie_header()})
    assert status == 403, status
    assert call("GET", "/v1/me", token=person)[0] == 200, "nothing happened"

    step = "security: no CSRF token, a person's session as an operator's, an operator's as a person's"
    status, _, _ = call("POST", f"/operator/accounts/{account}/lock", raw=b"reason=no+token",
                        headers={"Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie_header()})
    assert status == 403, status
    status, headers, _ = call("GET", f"/operator/accounts/{account}", headers={"Cookie": f"gh_operator={person}"})
    assert status == 303 and headers["Location"] == "/operator/login", (status, headers)
    operator_token = [c for c in browser.get_cookies() if c["name"] == "gh_operator"][0]["value"]
    assert call("GET", "/v1/me", token=operator_token)[0] == 401
    status, headers, _ = call("GET", "/operator/login")
    csp = headers["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in csp and "script-src" not in csp and "default-src 'none'" in csp, csp
    assert "SameSite=Strict" in headers["Set-Cookie"] and "HttpOnly" in headers["Set-Cookie"], headers["Set-Cookie"]
    assert call("GET", "/v1/me", token=person)[0] == 200, "still not locked"
    print("operator console browser session passed")
except Exception as error:
    sys.stderr.write(f"operator console test failed at: {step}: {type(error).__name__}: {error}\n")
    sys.stderr.write(server_state(server))
    if browser:
        source = browser.page_source
        sys.stderr.write(source[max(0, source.find("<main>")):][:4000] + "\n")
    sys.stderr.write(open(os.path.join(work, "server.log")).read()[-3000:] + "\n")
    sys.exit(1)
finally:
    if browser:
        browser.quit()
    if server and server.poll() is None:
        server.send_signal(signal.SIGTERM)
        server.wait(10)
