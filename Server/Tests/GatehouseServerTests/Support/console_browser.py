#!/usr/bin/env python3
"""The developer console in headless Chromium (Debian's chromium and chromedriver, driven by
Selenium): a developer signs in, adds an app with an icon, reads its key once, disables it,
rotates the key; the key works and stops working as it should (checked with the server's
apps list through the API), a form without its CSRF token is refused, and the headers say what
they must (CSP, HttpOnly and SameSite cookies; Secure outside development). Screenshots of each
step go to --screenshots. Exits 0 when every step was seen."""
import base64
import json
import os
import signal
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

from browser_session import call, chromium, free_port, press as press_and_wait, script_arguments, server_env, server_state, signed_up, start_server, with_authenticator_app

args, work = script_arguments("console-")
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=")


def start(port, env_extra):
    return start_server(args.gatehouse, work, server_env(work, port, env_extra), os.path.join(work, f"server{port}.log"))


PORT = free_port()
BASE = f"http://127.0.0.1:{PORT}"
# Every signature counts as signed (threshold 0), so the history page shows a low match (below 0.5) as such.
server = start(PORT, {"GATEHOUSE_ENV": "development", "GATEHOUSE_SIGNATURE_ACCEPT_AT": "0"})
production = None
browser = None
step = "setup"
try:
    # A developer's account, made through the API (its email code from the development outbox).
    api_token = signed_up(BASE, "dev@example.com", "Secret-42!", "Dana", "Dev")

    browser = chromium("1200,900")

    def press(element):
        press_and_wait(browser, element)

    def shot(name):
        path = os.path.join(args.screenshots, f"console-{name}.png")
        browser.save_screenshot(path)
        print(f"screenshot: {path}")

    step = "not signed in: the console sends to the sign-in page"
    browser.get(BASE + "/console")
    assert browser.current_url.endswith("/console/login"), browser.current_url
    shot("1-sign-in")

    step = "a wrong password keeps the developer on the page with the message"
    browser.find_element(By.ID, "email").send_keys("dev@example.com")
    browser.find_element(By.ID, "password").send_keys("wrong-password-1!")
    press(browser.find_element(By.ID, "signin"))
    assert "Wrong login or password" in browser.find_element(By.ID, "error").text, browser.page_source[:2000]

    step = "sign in"
    browser.find_element(By.ID, "password").send_keys("Secret-42!")
    press(browser.find_element(By.ID, "signin"))
    assert browser.current_url.endswith("/console"), browser.current_url
    assert "No apps yet." in browser.page_source
    shot("2-no-apps")

    step = "add an app with its icon; the key is shown once"
    icon = os.path.join(work, "icon.png")
    with open(icon, "wb") as f:
        f.write(PNG)
    browser.find_element(By.ID, "name").send_keys("Acme Signer")
    browser.find_element(By.ID, "bundleId").send_keys("com.acme.signer")
    browser.find_element(By.ID, "appEmail").send_keys("apps@acme.example")
    browser.find_element(By.ID, "website").send_keys("https://acme.example")
    browser.find_element(By.ID, "icon").send_keys(icon)
    press(browser.find_element(By.ID, "add"))
    key = browser.find_element(By.ID, "apikey").text.strip()
    assert key.startswith("stl_") and len(key) == 47, key
    shot("3-key-once")
    rows = browser.find_elements(By.CSS_SELECTOR, "#apps tr[data-app]")
    assert len(rows) == 1 and "com.acme.signer" in rows[0].text and "Enabled" in rows[0].text, rows[0].text
    assert rows[0].find_element(By.TAG_NAME, "img").get_property("naturalWidth") == 1, "the icon loads under the CSP"
    apps = json.loads(call(BASE, "GET", "/v1/apps", token=api_token)[2])["items"]
    assert len(apps) == 1 and apps[0]["iconUrl"], apps

    step = "the key is not shown again"
    browser.get(BASE + "/console")
    assert key not in browser.page_source and "apikey" not in [e.get_attribute("id") for e in browser.find_elements(By.ID, "apikey")]

    step = "disable, then enable"
    press(browser.find_element(By.XPATH, "//button[text()='Disable']"))
    assert "Disabled" in browser.find_element(By.CSS_SELECTOR, "#apps tr[data-app]").text
    assert json.loads(call(BASE, "GET", "/v1/apps", token=api_token)[2])["items"][0]["enabled"] is False
    shot("4-disabled")
    press(browser.find_element(By.XPATH, "//button[text()='Enable']"))
    assert "Enabled" in browser.find_element(By.CSS_SELECTOR, "#apps tr[data-app]").text

    step = "rotate: a new key, shown once"
    press(browser.find_element(By.XPATH, "//button[text()='Rotate key']"))
    rotated = browser.find_element(By.ID, "apikey").text.strip()
    assert rotated.startswith("stl_") and rotated != key, rotated
    hint = json.loads(call(BASE, "GET", "/v1/apps", token=api_token)[2])["items"][0]["keyHint"]
    assert rotated.startswith(hint.rstrip("…")), (rotated, hint)
    shot("5-rotated")

    step = "headers: CSP without script, HttpOnly SameSite cookies (no Secure in development)"
    status, headers, _ = call(BASE, "GET", "/console/login")
    csp = headers["Content-Security-Policy"]
    assert "default-src 'none'" in csp and "script-src" not in csp and "form-action 'self'" in csp, csp
    cookie = headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Secure" not in cookie, cookie

    step = "a form without the CSRF cookie and token is refused"
    session_cookie = [c for c in browser.get_cookies() if c["name"] == "gh_console"][0]
    assert session_cookie["httpOnly"], session_cookie
    status, _, _ = call(BASE, "POST", f"/console/apps/{apps[0]['id']}/disable", raw=b"csrf=guess",
                        headers={"Content-Type": "application/x-www-form-urlencoded", "Cookie": f"gh_console={session_cookie['value']}"})
    assert status == 403, status
    assert json.loads(call(BASE, "GET", "/v1/apps", token=api_token)[2])["items"][0]["enabled"] is True

    step = "sign out"
    browser.get(BASE + "/console")
    press(browser.find_element(By.XPATH, "//button[text()='Sign out']"))
    assert browser.current_url.endswith("/console/login"), browser.current_url
    browser.get(BASE + "/console")
    assert browser.current_url.endswith("/console/login")

    step = "with the authenticator app on, the password leads to the code; a wrong one keeps the page; a recovery code signs in"
    _, recovery = with_authenticator_app(BASE, api_token, "Secret-42!")
    browser.get(BASE + "/console/login")
    browser.find_element(By.ID, "email").send_keys("dev@example.com")
    browser.find_element(By.ID, "password").send_keys("Secret-42!")
    press(browser.find_element(By.ID, "signin"))
    assert "Two-step login" in browser.page_source and browser.find_elements(By.ID, "code"), browser.page_source[:2000]
    shot("5b-two-step")
    browser.find_element(By.ID, "code").send_keys("aaaaa-aaaaa")
    press(browser.find_element(By.ID, "verify"))
    assert "The code is wrong" in browser.find_element(By.ID, "error").text and browser.find_elements(By.ID, "code"), browser.page_source[:2000]
    browser.find_element(By.ID, "code").send_keys(recovery[0])
    press(browser.find_element(By.ID, "verify"))
    assert browser.current_url.endswith("/console"), browser.current_url
    assert "Acme Signer" in browser.page_source
    press(browser.find_element(By.XPATH, "//button[text()='Sign out']"))

    step = "outside development the cookies are Secure"
    prod_port = free_port()
    production = start(prod_port, {"GATEHOUSE_ENV": "production", "GATEHOUSE_SECRET": "x" * 40, "GATEHOUSE_ALLOW_DEV_DELIVERY": "true",
                                    "PUBLIC_URL": f"https://127.0.0.1:{prod_port}"})
    status, headers, _ = call(f"http://127.0.0.1:{prod_port}", "GET", "/console/login")
    assert status == 200 and "Secure" in headers["Set-Cookie"], headers["Set-Cookie"]
    step = "the history page: a document signed through the spec's endpoints"
    import math, random
    rng = random.Random(5)

    def sign(noise):
        n = rng.randint(120, 150)
        raw, t = [], 0.0
        for i in range(n):
            raw.append(t)
            t += 1 + 0.5 * math.sin(2 * math.pi * 2 * i / n + 0.3)
        a, b = 1 + rng.uniform(-noise, noise), 1 + rng.uniform(-noise, noise)
        ox, oy = rng.uniform(100, 300), rng.uniform(100, 300)
        points = []
        for r in raw:
            s_ = r / raw[-1] * 2 * math.pi
            x = 60 * s_ + 40 * a * math.cos(2 * s_ + 1) + 25 * math.cos(3.1 * s_)
            y = 30 * b * math.sin(1.5 * s_) + 20 * math.sin(2.7 * s_ + 0.5)
            points.append({"x": round(ox + 2 * x + rng.uniform(-.5, .5), 1), "y": round(oy + 2 * y + rng.uniform(-.5, .5), 1), "p": 0})
        return {"pressure": 0, "dot_count": len(points), "signature_contents": points}

    def post(path, fields):
        status, _, answer = call(BASE, "POST", path, fields)
        assert status == 200, (path, status, answer)
        return json.loads(answer)

    enrolment = {"apikey": rotated, "email": "signer@example.com", "user_name": "Ivan Petrov", "time": "22.01.2026 10:00:00",
                 "device_version": "iPhone 15", "os_version": "18.1", "resolution": {"width": 1179, "height": 2556},
                 "pressure": 0, "signatures": [sign(0.03) for _ in range(10)]}
    asked = post("/register/", enrolment)
    assert asked["res"] == "13", asked  # every enrolment proves the address first
    enrolment["email_code"] = json.loads(call(BASE, "GET", "/dev/outbox?to=signer%40example.com&last=1")[2])[0]["code"]
    registered = post("/register/", enrolment)
    assert registered["res"] == "0", registered
    session = registered["sessionid"]
    attempt = post("/authenticate/", {"apikey": rotated, "email": "signer@example.com", "signature": sign(0.03), "city": "Kazan",
                                      "country": "Russia", "photo": base64.b64encode(PNG).decode(), "time": "22.01.2026 10:05:00",
                                      "resolution": {"width": 1179, "height": 2556}, "pressure": 0, "sessionid": session})
    assert attempt["res"] == "0" and attempt["similarity"] >= 0.5, attempt
    saved = post("/savedocument/", {"apikey": rotated, "email": "signer@example.com", "previous_hash": "", "document_hash": "h1",
                                    "signatures": [attempt["signatureid"]], "sessionid": session})
    document = saved["documentid"]
    # A second signing that does not match (another shape): the history flags it.
    forged = sign(0.03)
    for point in forged["signature_contents"]:
        point["y"] = round(300 - point["y"] * 0.6 + 0.4 * point["x"], 1)
    low = post("/authenticate/", {"apikey": rotated, "email": "signer@example.com", "signature": forged, "sessionid": session,
                                  "time": "22.01.2026 10:06:00", "resolution": {"width": 1179, "height": 2556}, "pressure": 0})
    assert low["res"] == "0" and low["similarity"] < 0.5, low
    again = post("/savedocument/", {"apikey": rotated, "email": "signer@example.com", "previous_hash": "h1", "document_hash": "h2",
                                    "signatures": [low["signatureid"]], "sessionid": session})
    assert again["documentid"] == document, again
    browser.get(BASE + f"/documents/?documentid={document}")
    rows = browser.find_elements(By.CSS_SELECTOR, "#signings tr[data-signature]")
    assert len(rows) == 2 and "Ivan Petrov" in rows[0].text and "Kazan, Russia" in rows[0].text, browser.page_source[:2000]
    assert "low match" not in rows[0].text and "low match" in rows[1].text, rows[1].text
    assert rows[0].find_element(By.TAG_NAME, "img").get_property("naturalWidth") == 1, "the photo loads under the CSP"
    assert browser.find_element(By.TAG_NAME, "h1").text == "Signing history"
    shot("6-history-desktop")
    status, headers, _ = call(BASE, "GET", f"/documents/?documentid={document}")
    assert "script-src 'nonce-" in headers["Content-Security-Policy"], headers["Content-Security-Policy"]

    step = "the history page on an iPhone, in Russian: the app is tried, then the App Store offered"
    phone_options = Options()
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=430,932", "--lang=ru",
                 "--user-agent=Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1"):
        phone_options.add_argument(flag)
    phone_options.add_experimental_option("prefs", {"intl.accept_languages": "ru"})
    phone_options.binary_location = "/usr/bin/chromium"
    phone = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=phone_options)
    try:
        phone.get(BASE + f"/documents/?documentid={document}")
        alert = WebDriverWait(phone, 10).until(expected_conditions.alert_is_present())
        question = alert.text
        alert.dismiss()
        assert question == "У вас нет приложения Sign To Login. Скачать его?", question
        assert phone.find_element(By.TAG_NAME, "h1").text == "История подписания"
        path = os.path.join(args.screenshots, "console-7-history-iphone-ru.png")
        phone.save_screenshot(path)
        print(f"screenshot: {path}")
    finally:
        phone.quit()

    step = "no alert on a desktop, and an unknown document is a 404 page"
    browser.get(BASE + f"/documents/?documentid={document}")
    time.sleep(0.6)
    assert not expected_conditions.alert_is_present()(browser), "no app offer on a desktop"
    status, _, page = call(BASE, "GET", "/documents/?documentid=00ff00ff")
    assert status == 404 and b"There is no such document." in page, (status, page[:300])
    print("console browser session passed")
except Exception as error:
    sys.stderr.write(f"console browser test failed at: {step}: {type(error).__name__}: {error}\n")
    sys.stderr.write(server_state(server))
    if browser:
        source = browser.page_source
        sys.stderr.write(source[max(0, source.find("<body")):][:3000] + "\n")
    sys.exit(1)
finally:
    if browser:
        browser.quit()
    for process in (server, production):
        if process and process.poll() is None:
            process.send_signal(signal.SIGTERM)
            process.wait(10)
