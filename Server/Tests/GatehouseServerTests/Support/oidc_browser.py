#!/usr/bin/env python3
"""The OpenID Connect provider driven by clients nobody here wrote, against a `gatehouse serve` process: Authlib's
OAuth 2.0 / OpenID Connect client (discovery, authorization code with PKCE S256, token exchange, ID token
validation against the key set, userinfo, refresh, introspection, revocation), headless Chromium signing the person
in on the provider's page (password, then the authenticator app's code; consent for a third-party client; the page
in Russian, with a passkey of Chromium's virtual authenticator), PyJWT's PyJWKClient verifying access tokens as a team's backend does (across a key rotation; a changed
token, another audience and alg none refused), RP-initiated logout, and a public client. Screenshots of each page go
to --screenshots. Exits 0 when every step was seen."""
import base64
import json
import os
import subprocess
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, HTTPServer

import jwt as pyjwt
import requests
from authlib.common.security import generate_token
from authlib.integrations.base_client.errors import OAuthError
from authlib.integrations.requests_client import OAuth2Session
from authlib.jose import JsonWebKey, JsonWebToken
from authlib.oidc.core import CodeIDToken
from selenium.webdriver.common.by import By
from selenium.webdriver.common.virtual_authenticator import VirtualAuthenticatorOptions

from browser_session import call, chromium, free_port, press, script_arguments, server_env, signed_up, start_server, with_authenticator_app

args, work = script_arguments("oidc-")

PORT = free_port()
# localhost, not 127.0.0.1: a passkey's relying party is a domain (the public URL's host), never an address.
BASE = f"http://localhost:{PORT}"
ENV = server_env(work, PORT, {"GATEHOUSE_ENV": "development", "PUBLIC_URL": BASE})
server = start_server(args.gatehouse, work, ENV, os.path.join(work, "server.log"))

# The client's own web app: its callback answers a page (the browser lands there with the code).
APP_PORT = free_port()
REDIRECT = f"http://127.0.0.1:{APP_PORT}/callback"
AFTER_LOGOUT = f"http://127.0.0.1:{APP_PORT}/signed-out"


class ClientApp(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(b"<html><body><h1 id='app'>Acme Shop</h1></body></html>")

    def log_message(self, *a):
        pass


app_server = HTTPServer(("127.0.0.1", APP_PORT), ClientApp)
threading.Thread(target=app_server.serve_forever, daemon=True).start()


def gatehouse(*command):
    done = subprocess.run([args.gatehouse, *command], cwd=work, env=ENV, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr + done.stdout
    return done.stdout


browser = None
step = "setup"
try:
    # A person with the authenticator app on, made through /v1 (the email code from the development outbox).
    api_token = signed_up(BASE, "ann@example.com", "Secret-42!", "Ann", "Lee")
    totp, recovery = with_authenticator_app(BASE, api_token, "Secret-42!")

    step = "the operator registers a confidential third-party client and a public one (gatehouse oidc-clients)"
    shop = json.loads(gatehouse("oidc-clients", "create", "Acme Shop", "--redirect-uri", REDIRECT, "--post-logout-redirect-uri", AFTER_LOGOUT,
                                "--scope", "openid,profile,email,offline_access", "--json"))
    assert shop["kind"] == "confidential" and shop["clientSecret"].startswith("ghcs_"), shop
    phone_app = json.loads(gatehouse("oidc-clients", "create", "Acme Phone", "--public", "--redirect-uri", REDIRECT, "--scope", "openid", "--json"))
    assert phone_app["kind"] == "public" and phone_app.get("clientSecret") is None, phone_app
    listed = gatehouse("oidc-clients", "list")
    assert shop["clientID"] in listed and "ghcs_" not in listed, listed

    step = "discovery"
    meta = requests.get(BASE + "/.well-known/openid-configuration", timeout=10).json()
    before = {k["kid"] for k in requests.get(meta["jwks_uri"], timeout=10).json()["keys"]}
    assert len(before) == 1, before
    assert meta["issuer"] == BASE and meta["code_challenge_methods_supported"] == ["S256"], meta

    browser = chromium("1000,900")

    def shot(name):
        path = os.path.join(args.screenshots, f"oidc-{name}.png")
        browser.save_screenshot(path)
        print(f"screenshot: {path}")

    step = "Authlib starts the code flow with PKCE; the page asks for the password, then the app's code, then consent"
    client = OAuth2Session(shop["clientID"], shop["clientSecret"], scope="openid profile email offline_access", redirect_uri=REDIRECT,
                           code_challenge_method="S256", token_endpoint_auth_method="client_secret_basic")
    verifier = generate_token(64)
    nonce = generate_token(20)
    url, state = client.create_authorization_url(meta["authorization_endpoint"], code_verifier=verifier, nonce=nonce)
    browser.get(url)
    assert browser.find_elements(By.ID, "signin"), browser.current_url
    assert "Acme Shop" in browser.page_source
    shot("1-sign-in")
    browser.find_element(By.ID, "identifier").send_keys("ann@example.com")
    browser.find_element(By.ID, "password").send_keys("wrong-password-1!")
    press(browser, browser.find_element(By.ID, "signin"))
    assert "Wrong login or password" in browser.find_element(By.ID, "error").text, browser.page_source[:2000]
    browser.find_element(By.ID, "password").send_keys("Secret-42!")
    press(browser, browser.find_element(By.ID, "signin"))
    assert browser.find_elements(By.ID, "code"), browser.page_source[:2000]
    shot("2-second-step")
    # The confirmation used this step's code: the next step's is within the window and newer.
    browser.find_element(By.ID, "code").send_keys(totp.at(int(time.time()) + 30))
    press(browser, browser.find_element(By.ID, "verify"))
    assert browser.find_elements(By.ID, "allow"), browser.page_source[:2000]
    scopes = browser.find_element(By.ID, "scopes").text
    assert "email address" in scopes and "127.0.0.1" in browser.page_source, scopes
    shot("3-consent")
    press(browser, browser.find_element(By.ID, "allow"))
    callback = browser.current_url
    assert callback.startswith(REDIRECT + "?code="), callback
    returned = dict(urllib.parse.parse_qsl(urllib.parse.urlparse(callback).query))
    assert returned["state"] == state and returned["iss"] == BASE, returned

    step = "the token exchange (the code and the verifier, the client by HTTP Basic) and the ID token, validated by Authlib"
    token = client.fetch_token(meta["token_endpoint"], authorization_response=callback, code_verifier=verifier)
    keys = JsonWebKey.import_key_set(requests.get(meta["jwks_uri"], timeout=10).json())
    id_token = JsonWebToken(["ES256"]).decode(token["id_token"], keys, claims_cls=CodeIDToken,
                                              claims_options={"iss": {"essential": True, "values": [BASE]}},
                                              claims_params={"nonce": nonce, "client_id": shop["clientID"]})
    id_token.validate(leeway=60)
    assert id_token["aud"] == shop["clientID"] and id_token["amr"] == ["pwd", "otp"] and id_token["acr"] == "2", dict(id_token)
    assert abs(id_token["auth_time"] - time.time()) < 120, dict(id_token)
    header = json.loads(base64.urlsafe_b64decode(token["id_token"].split(".")[0] + "=="))
    assert header["typ"] == "JWT" and header["alg"] == "ES256", header

    step = "userinfo with the access token"
    person = client.get(meta["userinfo_endpoint"]).json()
    assert person["sub"] == id_token["sub"] and person["email"] == "ann@example.com" and person["name"] == "Ann Lee", person

    step = "a team's backend verifies the access token with PyJWT's PyJWKClient, and refuses what it must"
    jwks = pyjwt.PyJWKClient(meta["jwks_uri"])

    def backend(access, audience=shop["clientID"]):
        key = jwks.get_signing_key_from_jwt(access).key
        claims = pyjwt.decode(access, key, algorithms=["ES256"], audience=audience, issuer=BASE)
        assert pyjwt.get_unverified_header(access)["typ"] == "at+jwt"
        return claims

    assert backend(token["access_token"])["sub"] == id_token["sub"]
    head, body, signature = token["access_token"].split(".")
    forged = head + "." + base64.urlsafe_b64encode(json.dumps({**backend(token["access_token"]), "sub": "someone-else"}).encode()).decode().rstrip("=") + "." + signature
    none = base64.urlsafe_b64encode(b'{"alg":"none","typ":"at+jwt"}').decode().rstrip("=") + "." + body + "."
    for bad, audience in [(forged, shop["clientID"]), (token["access_token"], "https://another.example"), (none, shop["clientID"])]:
        try:
            backend(bad, audience)
            raise AssertionError("accepted: " + bad[:40])
        except pyjwt.exceptions.PyJWTError as refused:
            print("refused:", type(refused).__name__)

    step = "a key rotation: the next key is published beside the one that signed, whose token still verifies"
    gatehouse("keys", "rotate")
    # A running server reads its keys again within half a minute.
    for _ in range(40):
        after = {k["kid"] for k in requests.get(meta["jwks_uri"], timeout=10).json()["keys"]}
        if len(after) == len(before) + 1:
            break
        time.sleep(1)
    assert before < after and len(after) == len(before) + 1, (before, after)
    jwks = pyjwt.PyJWKClient(meta["jwks_uri"])
    assert backend(token["access_token"])["sub"] == id_token["sub"]

    step = "refresh (rotation), introspection and revocation"
    renewed = client.refresh_token(meta["token_endpoint"], refresh_token=token["refresh_token"])
    assert renewed["refresh_token"] != token["refresh_token"] and backend(renewed["access_token"])["sub"] == id_token["sub"], renewed
    seen = client.introspect_token(meta["introspection_endpoint"], token=renewed["access_token"]).json()
    assert seen["active"] is True and seen["client_id"] == shop["clientID"], seen
    assert client.revoke_token(meta["revocation_endpoint"], token=renewed["refresh_token"]).status_code == 200
    assert client.introspect_token(meta["introspection_endpoint"], token=renewed["access_token"]).json() == {"active": False}
    assert requests.get(meta["userinfo_endpoint"], headers={"Authorization": "Bearer " + renewed["access_token"]}, timeout=10).status_code == 401
    try:
        client.refresh_token(meta["token_endpoint"], refresh_token=renewed["refresh_token"])
        raise AssertionError("a revoked refresh token was exchanged")
    except OAuthError as refused:
        assert refused.error == "invalid_grant", refused

    step = "RP-initiated logout: back to the registered URI with state; the browser is signed out"
    browser.get(meta["end_session_endpoint"] + "?" + urllib.parse.urlencode(
        {"id_token_hint": token["id_token"], "post_logout_redirect_uri": AFTER_LOGOUT, "state": "bye-1"}))
    assert browser.current_url == AFTER_LOGOUT + "?state=bye-1", browser.current_url

    step = "a passkey made in Chromium (a virtual authenticator) and kept through /v1, the change confirmed with a recovery code"
    browser.get(BASE + "/oauth/logout")  # a page of the relying party's origin, where WebAuthn may run
    browser.add_virtual_authenticator(VirtualAuthenticatorOptions(protocol="ctap2", transport="internal", has_resident_key=True,
                                                                  has_user_verification=True, is_user_verified=True, is_user_consenting=True))
    status, _, answer = call(BASE, "POST", "/v1/me/passkeys/options", {"currentPassword": "Secret-42!", "recoveryCode": recovery[1]}, token=api_token)
    assert status == 200, answer
    made = browser.execute_async_script("""
        var done = arguments[arguments.length - 1], o = arguments[0];
        var b64 = function (b) { return btoa(String.fromCharCode.apply(null, new Uint8Array(b))).replace(/\\+/g, "-").replace(/\\//g, "_").replace(/=+$/, ""); };
        var bytes = function (t) { var s = atob(t.replace(/-/g, "+").replace(/_/g, "/")); return Uint8Array.from(s, function (c) { return c.charCodeAt(0); }); };
        navigator.credentials.create({ publicKey: { rp: o.rp, user: { id: bytes(o.user.id), name: o.user.name, displayName: o.user.displayName },
            challenge: bytes(o.challenge), pubKeyCredParams: o.pubKeyCredParams, timeout: o.timeout, authenticatorSelection: o.authenticatorSelection,
            attestation: o.attestation } })
          .then(function (c) { done(JSON.stringify({ id: c.id, rawId: b64(c.rawId), type: c.type, authenticatorAttachment: c.authenticatorAttachment,
            response: { clientDataJSON: b64(c.response.clientDataJSON), attestationObject: b64(c.response.attestationObject) } })); })
          .catch(function (e) { done("error: " + e); });
        """, json.loads(answer))
    assert not made.startswith("error"), made
    status, _, answer = call(BASE, "POST", "/v1/me/passkeys", {"credential": json.loads(made), "name": "Chromium"}, token=api_token)
    assert status == 201, answer

    step = "a public client in Russian: PKCE alone, the passkey instead of the password; without the verifier the exchange is refused"
    public = OAuth2Session(phone_app["clientID"], None, scope="openid", redirect_uri=REDIRECT, code_challenge_method="S256",
                           token_endpoint_auth_method="none")
    verifier = generate_token(64)
    url, state = public.create_authorization_url(meta["authorization_endpoint"], code_verifier=verifier, nonce="n2", ui_locales="ru")
    browser.get(url)
    assert "Вход" in browser.page_source and browser.find_element(By.ID, "passkey").is_displayed(), browser.page_source[:2000]
    shot("4-sign-in-ru")
    press(browser, browser.find_element(By.ID, "passkey"))
    assert browser.find_elements(By.ID, "allow") and "Разрешить" in browser.page_source, browser.page_source[:2000]
    shot("5-consent-ru")
    press(browser, browser.find_element(By.ID, "allow"))
    callback = browser.current_url
    code = dict(urllib.parse.parse_qsl(urllib.parse.urlparse(callback).query))["code"]
    status, _, answer = call(BASE, "POST", "/oauth/token", raw=urllib.parse.urlencode(
        {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, "client_id": phone_app["clientID"]}).encode(),
        headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert status == 400 and json.loads(answer)["error"] == "invalid_request", answer
    token = public.fetch_token(meta["token_endpoint"], authorization_response=callback, code_verifier=verifier)
    assert token["token_type"] == "Bearer" and "id_token" in token, token
    passkey_claims = json.loads(base64.urlsafe_b64decode(token["id_token"].split(".")[1] + "=="))
    assert passkey_claims["amr"] in (["hwk"], ["swk"]) and passkey_claims["acr"] == "2", passkey_claims

    step = "the passkey as the second step: prompt=login asks the password again, then the app's code or the passkey"
    verifier = generate_token(64)
    url, state = client.create_authorization_url(meta["authorization_endpoint"], code_verifier=verifier, nonce="n4", prompt="login")
    browser.get(url)
    browser.find_element(By.ID, "identifier").send_keys("ann@example.com")
    browser.find_element(By.ID, "password").send_keys("Secret-42!")
    press(browser, browser.find_element(By.ID, "signin"))
    assert browser.find_element(By.ID, "passkey").is_displayed(), browser.page_source[:2000]
    shot("6-second-step-passkey")
    press(browser, browser.find_element(By.ID, "passkey"))
    token = client.fetch_token(meta["token_endpoint"], authorization_response=browser.current_url, code_verifier=verifier)
    second = JsonWebToken(["ES256"]).decode(token["id_token"], keys, claims_cls=CodeIDToken, claims_params={"nonce": "n4", "client_id": shop["clientID"]})
    second.validate(leeway=60)
    assert second["amr"][0] == "pwd" and second["amr"][1] in ("hwk", "swk") and second["acr"] == "2", dict(second)
    print("oidc browser session passed")
except Exception:
    print(f"failed at: {step}")
    if browser is not None:
        print(browser.current_url)
    print(open(os.path.join(work, "server.log")).read()[-3000:])
    raise
finally:
    if browser is not None:
        browser.quit()
    server.terminate()
    server.wait(timeout=10)
    app_server.shutdown()
