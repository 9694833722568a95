"""What the browser tests of the server's pages share (console_browser.py, operator_browser.py): a free port, a
`gatehouse serve` process with the tests' settings, HTTP calls that do not follow redirects, and Debian's headless
Chromium driven by Selenium, with a click that waits for the next page."""
import argparse
import json
import os
import tempfile
import urllib.error
import urllib.parse
import urllib.request

from server_process import free_port, server_state, start_server  # noqa: F401 (the browser scripts import them from here)

from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait


def script_arguments(prefix):
    """The arguments every browser script takes (`--gatehouse`, the binary; `--screenshots`, where its pictures go) and
    a new working folder for its servers."""
    p = argparse.ArgumentParser()
    p.add_argument("--gatehouse", required=True)
    p.add_argument("--screenshots", required=True)
    args = p.parse_args()
    args.gatehouse = os.path.abspath(args.gatehouse)
    os.makedirs(args.screenshots, exist_ok=True)
    return args, tempfile.mkdtemp(prefix=prefix)


def signed_up(base, email, password, first, last):
    """A person signed up through /v1 by an email code (read from the development outbox): their session's token."""
    call(base, "POST", "/v1/signup/code", {"email": email})
    code = json.loads(call(base, "GET", "/dev/outbox?to=" + urllib.parse.quote(email) + "&last=1")[2])[0]["code"]
    status, _, answer = call(base, "POST", "/v1/signup", {"email": email, "code": code, "password": password,
                                                         "firstName": first, "lastName": last, "locale": "en"})
    assert status == 201, answer
    return json.loads(answer)["token"]


def with_authenticator_app(base, token, password):
    """Turns the authenticator app on for the session's account (pyotp is the app): the app, and the recovery codes."""
    import pyotp
    status, _, answer = call(base, "POST", "/v1/me/totp", {"currentPassword": password}, token=token)
    assert status == 201, answer
    totp = pyotp.parse_uri(json.loads(answer)["uri"])
    status, _, answer = call(base, "POST", "/v1/me/totp/confirm", {"code": totp.now()}, token=token)
    assert status == 200, answer
    return totp, json.loads(answer)["codes"]


def server_env(work, port, extra=None, name=None):
    """The environment of a test server on `port`: this process's, without any GATEHOUSE_ setting, plus the tests'
    (SQLite and blobs in `work`, bcrypt's cheapest cost, no delivery wait) and `extra`."""
    name = name or f"g{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("GATEHOUSE_") and k not in ("DATABASE_URL", "PUBLIC_URL")}
    env.update({"DATABASE_URL": os.path.join(work, f"{name}.sqlite"), "GATEHOUSE_HOST": "127.0.0.1", "GATEHOUSE_PORT": str(port),
                "GATEHOUSE_LOG_LEVEL": "warning", "GATEHOUSE_BCRYPT_COST": "4", "GATEHOUSE_DELIVERY_WAIT_SECONDS": "0",
                "GATEHOUSE_BLOB_DIR": os.path.join(work, f"blobs-{name}")})
    env.update(extra or {})
    return env


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *a, **k):
        return None


def call(base, method, path, body=None, token=None, headers=None, raw=None):
    """One request, redirects not followed: the status, the headers and the body."""
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    request = urllib.request.Request(base + path, method=method, data=data, headers=headers or {"Content-Type": "application/json"})
    if token:
        request.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.build_opener(NoRedirect).open(request, timeout=10) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def chromium(window="1200,900"):
    options = Options()
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", f"--window-size={window}"):
        options.add_argument(flag)
    options.binary_location = "/usr/bin/chromium"
    browser = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    browser.set_page_load_timeout(20)
    return browser


def press(browser, element):
    """Clicks a submit button and waits until the next page has replaced this one."""
    page = browser.find_element(By.TAG_NAME, "html")
    element.click()

    def replaced(_):
        # Selenium's staleness_of knows only StaleElementReferenceException; Chromium also answers "Node with given
        # id does not belong to the document" for a page just replaced.
        try:
            page.is_enabled()
            return False
        except WebDriverException:
            return True

    WebDriverWait(browser, 15).until(replaced)
    WebDriverWait(browser, 15).until(lambda b: b.execute_script("return document.readyState") == "complete")
