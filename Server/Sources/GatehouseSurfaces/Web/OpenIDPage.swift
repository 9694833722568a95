import Crypto
import Foundation
import GatehouseFoundation
import HTTPTypes
import Hummingbird
import Mustache

/// The OpenID Connect provider's pages (docs/oidc.md, "The sign-in page"), in the reader's language, with one script
/// (the passkey button's, allowed by its hash):
/// sign in, the second step, consent for a third-party client, sign out, and a request that cannot be used. Each form
/// posts back with the authorization request's parameters and the CSRF token; no page may be framed, and none sends
/// a referrer.
package enum OpenIDPage {
    package static let style = """
        body { font-family: -apple-system, system-ui, sans-serif; background: #f5f5f7; margin: 0; color: #1d1d1f; }
        main { max-width: 24rem; margin: 10vh auto; background: #fff; border-radius: 14px; padding: 2rem; box-shadow: 0 1px 4px rgba(0,0,0,.08); }
        h1 { font-size: 1.35rem; margin: 0 0 .4rem; }
        p.lead { color: #555; margin: 0 0 1.2rem; }
        label { display: block; margin: .8rem 0 .25rem; font-size: .9rem; }
        input[type=text], input[type=password] { width: 100%; box-sizing: border-box; padding: .6rem; border: 1px solid #ccc; border-radius: 9px; font: inherit; }
        button { font: inherit; width: 100%; padding: .65rem 1rem; border: 0; border-radius: 9px; background: #0a66d8; color: #fff; cursor: pointer; margin-top: 1.1rem; }
        button.quiet { background: #e8e8ed; color: #1d1d1f; margin-top: .5rem; }
        ul { padding-left: 1.2rem; }
        li { margin: .35rem 0; }
        .error { color: #b3261e; }
        .hint { color: #555; font-size: .9rem; }
        """

    /// The one script of the pages: a passkey button asks the browser for an assertion (WebAuthn) with the options
    /// `/v1` gives, and posts it in the form (`step=passkey`). Without a script, or without WebAuthn, the button stays
    /// hidden and the page works with the password and codes.
    package static let script = """
        (function () {
          if (!window.PublicKeyCredential) return;
          var b64 = function (buffer) { return btoa(String.fromCharCode.apply(null, new Uint8Array(buffer))).replace(/\\+/g, "-").replace(/\\//g, "_").replace(/=+$/, ""); };
          var bytes = function (text) { var s = atob(text.replace(/-/g, "+").replace(/_/g, "/")); return Uint8Array.from(s, function (c) { return c.charCodeAt(0); }); };
          document.querySelectorAll("button[data-passkey]").forEach(function (button) {
            button.hidden = false;
            button.addEventListener("click", async function (event) {
              event.preventDefault();
              var form = button.form, challenge = form.querySelector("input[name=challenge]");
              try {
                var answer = await fetch("/v1/sessions/passkey/options", { method: "POST", headers: { "Content-Type": "application/json" },
                  body: JSON.stringify(challenge ? { challenge: challenge.value } : {}) });
                if (!answer.ok) throw new Error("options: " + answer.status);
                var o = await answer.json();
                var credential = await navigator.credentials.get({ publicKey: { challenge: bytes(o.challenge), timeout: o.timeout, rpId: o.rpId,
                  userVerification: o.userVerification, allowCredentials: o.allowCredentials.map(function (c) { return { type: c.type, id: bytes(c.id), transports: c.transports }; }) } });
                var r = credential.response;
                form.querySelector("input[name=passkey]").value = JSON.stringify({ id: credential.id, rawId: b64(credential.rawId), type: credential.type,
                  authenticatorAttachment: credential.authenticatorAttachment, response: { clientDataJSON: b64(r.clientDataJSON),
                  authenticatorData: b64(r.authenticatorData), signature: b64(r.signature), userHandle: r.userHandle ? b64(r.userHandle) : null } });
                form.querySelector("input[name=step]").value = "passkey";
                form.submit();
              } catch (error) {
                document.getElementById("passkey-error").hidden = false;
              }
            });
          });
        })();
        """

    package static let template: MustacheTemplate = try! MustacheTemplate(string: PageLayout.page(
        lang: "{{lang}}", title: "{{title}}", style: style, body: """
        <main>
        <h1>{{title}}</h1>
        {{#lead}}<p class="lead">{{lead}}</p>{{/lead}}
        {{#error}}<p class="error" id="error">{{error}}</p>{{/error}}
        {{#login}}
        <form method="post" action="/oauth/authorize">
        {{#hidden}}<input type="hidden" name="{{name}}" value="{{value}}">{{/hidden}}
        <input type="hidden" name="step" value="login">
        <label for="identifier">{{identifierLabel}}</label><input id="identifier" type="text" name="identifier" value="{{identifier}}" autocomplete="username" required>
        <label for="password">{{passwordLabel}}</label><input id="password" type="password" name="password" autocomplete="current-password" required>
        <button type="submit" id="signin">{{button}}</button>
        <input type="hidden" name="passkey" value="">
        <button class="quiet" type="button" data-passkey id="passkey" hidden>{{passkeyButton}}</button>
        </form>
        <p class="error" id="passkey-error" hidden>{{passkeyError}}</p>
        {{/login}}
        {{#secondStep}}
        <p class="hint">{{hint}}</p>
        <form method="post" action="/oauth/authorize">
        {{#hidden}}<input type="hidden" name="{{name}}" value="{{value}}">{{/hidden}}
        <input type="hidden" name="step" value="second">
        <input type="hidden" name="challenge" value="{{secondStep}}">
        <label for="code">{{codeLabel}}</label><input id="code" type="text" name="code" inputmode="numeric" autocomplete="one-time-code" maxlength="20" required>
        <button type="submit" id="verify">{{button}}</button>
        {{#passkeyOffered}}
        <input type="hidden" name="offered" value="passkey">
        <input type="hidden" name="passkey" value="">
        <button class="quiet" type="button" data-passkey id="passkey" hidden>{{passkeyButton}}</button>
        {{/passkeyOffered}}
        </form>
        <p class="error" id="passkey-error" hidden>{{passkeyError}}</p>
        {{/secondStep}}
        {{#consent}}
        <ul id="scopes">{{#scopes}}<li>{{.}}</li>{{/scopes}}</ul>
        <p class="hint">{{signedInAs}}</p>
        <form method="post" action="/oauth/authorize">
        {{#hidden}}<input type="hidden" name="{{name}}" value="{{value}}">{{/hidden}}
        <input type="hidden" name="step" value="consent">
        <button type="submit" name="decision" value="allow" id="allow">{{allow}}</button>
        <button class="quiet" type="submit" name="decision" value="deny" id="deny">{{deny}}</button>
        </form>
        {{/consent}}
        {{#logout}}
        <form method="post" action="/oauth/logout">
        {{#hidden}}<input type="hidden" name="{{name}}" value="{{value}}">{{/hidden}}
        <button type="submit" id="signout">{{button}}</button>
        </form>
        {{/logout}}
        </main>
        <script>\(script)</script>
        """))

    /// A page: its values (the template's), its status, the cookies it sets and where its forms may lead.
    package static func render(_ values: [String: Any], language: AppLanguage, status: HTTPResponse.Status = .ok, cookies: [String] = [],
                               formAction: String = "'self'") -> Response {
        var values = values
        values["lang"] = language.rawValue
        let html = template.render(values)
        var headers = PageForm.headers(style: style, images: false, referrer: "no-referrer", formAction: formAction)
        let scriptHash = Data(SHA256.hash(data: Data(script.utf8))).base64EncodedString()
        headers[.contentSecurityPolicy] = (headers[.contentSecurityPolicy] ?? "") + "; script-src 'sha256-\(scriptHash)'; connect-src 'self'"
        return PageForm.response(html, headers: headers, status: status, cookies: cookies)
    }
}
