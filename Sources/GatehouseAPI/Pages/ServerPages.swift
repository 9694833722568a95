/// The server's own pages and machine endpoints, beside the apps' APIs: every route the server
/// serves is declared in this module, these included, so the OpenAPI document is built from one
/// list and a route's method, path, success status and access are read in one place. Their
/// bodies are forms (`FormBody`) or raw bytes (`RawBody`): HTML, a webhook's payload, metrics.
public enum ServerPages {
    /// The API's own description: the root's signposts, the OpenAPI document as JSON and as YAML, its reference page.
    public enum APIDocument {
        /// `GET /`: where to go next.
        public static let root = Endpoint<NoContent, RawBody>(.get, "/", access: .anyone)
            .operation("getRoot", "Where to go next", tags: "Operations")
        /// `GET /openapi.json`: this document, as JSON.
        public static let openAPI = Endpoint<NoContent, RawBody>(.get, GatehouseAPI.APIReference.openAPI, access: .anyone)
            .operation("getOpenAPIDocument", "This OpenAPI 3.1 document", tags: "Operations")
        /// `GET /openapi.yaml`: this document, as YAML.
        public static let openAPIYAML = Endpoint<NoContent, RawBody>(.get, GatehouseAPI.APIReference.openAPIYAML, access: .anyone)
            .operation("getOpenAPIDocumentYAML", "This OpenAPI 3.1 document, as YAML", tags: "Operations")
        /// `GET /docs`: the API reference page, rendered from this document.
        public static let docs = Endpoint<NoContent, RawBody>(.get, GatehouseAPI.APIReference.docs, access: .anyone)
            .operation("getAPIReference", "The API reference page", tags: "Operations")
        /// Every operation of these pages.
        public static let all: [any EndpointDeclaration] = [root, openAPI, openAPIYAML, docs]
    }

    /// What other services read to trust Gatehouse's tokens (docs/oidc.md).
    public enum WellKnown {
        /// The public keys that sign the tokens (RFC 7517 §5): every key published, the next one before it signs
        /// and a retired one until its tokens have expired.
        public static let keySet = Endpoint<NoContent, RawBody>(.get, "/.well-known/jwks.json", access: .anyone)
            .operation("getKeySet", "The keys that sign Gatehouse's tokens (JWKS)", tags: "Tokens")
        /// Every operation of `/.well-known`.
        public static let all: [any EndpointDeclaration] = [keySet]
    }

    /// The OpenID Connect provider (docs/oidc.md, "The provider"): discovery, the authorization endpoint and its
    /// sign-in and consent pages, the token endpoint, `userinfo`, revocation (RFC 7009), introspection (RFC 7662) and
    /// RP-initiated logout. Its refusals are OAuth's (`{"error": …}`) or, in a browser, a page.
    public enum OpenID {
        /// The parameters of an authorization request (RFC 6749 §4.1.1, RFC 7636 §4.3, OpenID Connect Core §3.1.2.1).
        public static let authorizationFields: [FormField] = [
            .text("response_type"), .text("client_id"), .text("redirect_uri"), .text("scope"), .text("state"), .text("nonce"),
            .text("code_challenge"), .text("code_challenge_method"), .text("prompt"), .text("max_age"), .text("ui_locales"), .text("login_hint"),
        ]
        /// `GET /.well-known/openid-configuration`: the OpenID Connect provider's metadata (discovery). OpenID Connect
        /// Discovery 1.0: the issuer (the public URL), every endpoint, `response_types_supported: ["code"]`,
        /// `code_challenge_methods_supported: ["S256"]`, `id_token_signing_alg_values_supported: ["ES256"]`, the scopes
        /// and claims, `authorization_response_iss_parameter_supported: true`. Cacheable for five minutes.
        public static let discovery = Endpoint<NoContent, RawBody>(.get, "/.well-known/openid-configuration", access: .anyone)
            .operation("getOpenIDConfiguration", "The OpenID Connect provider's metadata (discovery)", tags: "OpenID Connect")
        /// `GET /oauth/authorize`: start a sign-in for a client: the sign-in page, or a redirect with a code. An
        /// authorization request (RFC 6749 §4.1.1 with PKCE, RFC 7636): `response_type=code`, `client_id`,
        /// `redirect_uri` (registered, matched exactly), `scope` (with `openid`), `state`, `nonce`, `code_challenge`
        /// and `code_challenge_method=S256`; optionally `prompt` (`none`, `login`, `consent`), `max_age`, `ui_locales`,
        /// `login_hint`. Answers the sign-in page (or consent for a third-party client), or, once the person is signed
        /// in and has allowed the client, a 303 to the redirect URI with `code`, `state` and `iss` (RFC 9207). A
        /// problem after the client and its redirect URI are known is a 303 there with `error`, `error_description`,
        /// `state` and `iss`.
        public static let authorize = Endpoint<OpenIDAuthorizationQuery, RawBody>(.get, "/oauth/authorize", access: .anyone)
            .operation("authorize", "Start a sign-in for a client: the sign-in page, or a redirect with a code", tags: "OpenID Connect")
            .errors([400: []], format: .page)
        /// `POST /oauth/authorize`: the sign-in, second-step and consent forms (and an authorization request by POST).
        /// The pages' forms (`step` = `login` with `identifier` and `password`, `second` with `challenge` and `code` —
        /// the authenticator app's or a recovery code —, `consent` with `decision` = `allow` or `deny`), each with the
        /// authorization request's parameters and `csrf`; without `step`, an authorization request by POST. Signing in
        /// sets the `gh_oidc` cookie (`HttpOnly`, `SameSite=Lax`, `Path=/oauth`, `Secure` outside development).
        public static let authorizeForm = Endpoint<FormBody, RawBody>(.post, "/oauth/authorize", access: .anyone)
            .operation("authorizeForm", "The sign-in, second-step and consent forms (and an authorization request by POST)", tags: "OpenID Connect")
            .errors([400: [], 401: [], 403: [], 429: []], format: .page)
            .form([.urlencoded], authorizationFields + [.text("csrf"), .text("step"), .text("identifier"), .text("password"), .text("challenge"),
                                                        .text("code"), .text("decision")], required: false)
        /// `POST /oauth/token`: exchange a code, a refresh token or a client's credentials for tokens. The token
        /// endpoint (RFC 6749 §3.2). The client authenticates with HTTP Basic (`client_secret_basic`) or `client_id`
        /// and `client_secret` in the form (`client_secret_post`); a public client sends `client_id` alone.
        /// `grant_type=authorization_code` with `code`, `redirect_uri` and `code_verifier`; `grant_type=refresh_token`
        /// with `refresh_token` (it rotates); `grant_type=client_credentials` with an optional `scope` (a confidential
        /// client's own token, of no person). Answers `access_token`, `token_type: Bearer`, `expires_in`, `scope`, and,
        /// for a code, `refresh_token` and `id_token`. `Cache-Control: no-store`.
        public static let token = Endpoint<FormBody, RawBody>(.post, "/oauth/token", access: .anyone)
            .operation("token", "Exchange a code, a refresh token or a client's credentials for tokens", tags: "OpenID Connect")
            .errors([400: [], 401: [], 429: []], format: .oauth)
            .form([.urlencoded], [.text("grant_type"), .text("code"), .text("redirect_uri"), .text("code_verifier"), .text("refresh_token"),
                                  .text("scope"), .text("client_id"), .text("client_secret")])
        /// `GET /oauth/userinfo`: the signed-in person's claims, as the access token's scopes allow. The person's
        /// claims (OpenID Connect Core §5.3) for a live access token of theirs (`Authorization: Bearer`): `sub`; with
        /// `profile` `name`, `given_name`, `family_name`, `middle_name`, `preferred_username`, `locale`, `updated_at`;
        /// with `email` `email`, `email_verified`; with `phone` `phone_number`, `phone_number_verified`.
        public static let userinfo = Endpoint<NoContent, RawBody>(.get, "/oauth/userinfo", access: .anyone)
            .operation("userinfo", "The signed-in person's claims, as the access token's scopes allow", tags: "OpenID Connect")
            .errors([401: [], 403: []], format: .bare)
        /// `POST /oauth/userinfo`: the signed-in person's claims (POST). The same as GET.
        public static let userinfoForm = Endpoint<NoContent, RawBody>(.post, "/oauth/userinfo", access: .anyone)
            .operation("userinfoPost", "The signed-in person's claims (POST)", tags: "OpenID Connect")
            .errors([401: [], 403: []], format: .bare)
        /// `POST /oauth/revoke`: revoke a token of the calling client (RFC 7009). RFC 7009, for a confidential client:
        /// revoking an access or refresh token it was issued ends its grant (the session the code opened, with every
        /// token of it). Anything else changes nothing, and is answered alike.
        public static let revoke = Endpoint<FormBody, RawBody>(.post, "/oauth/revoke", access: .anyone)
            .operation("revokeToken", "Revoke a token of the calling client (RFC 7009)", tags: "OpenID Connect")
            .errors([400: [], 401: [], 429: []], format: .oauth)
            .form([.urlencoded], [.text("token"), .text("token_type_hint"), .text("client_id"), .text("client_secret")])
        /// `POST /oauth/introspect`: what a token of the calling client is (RFC 7662). RFC 7662, for a confidential
        /// client: `{"active": true, "client_id", "sub", "scope", "exp", "iat", "iss", "aud", "sid", "token_type"}` for
        /// a live token issued to it; `{"active": false}` for anything else.
        public static let introspect = Endpoint<FormBody, RawBody>(.post, "/oauth/introspect", access: .anyone)
            .operation("introspectToken", "What a token of the calling client is (RFC 7662)", tags: "OpenID Connect")
            .errors([400: [], 401: [], 429: []], format: .oauth)
            .form([.urlencoded], [.text("token"), .text("token_type_hint"), .text("client_id"), .text("client_secret")])
        /// `GET /oauth/logout`: sign out (RP-initiated logout). RP-initiated logout (OpenID Connect RP-Initiated Logout
        /// 1.0): with an `id_token_hint` the provider signed, the client's session and the browser's sign-in end and
        /// the browser goes to `post_logout_redirect_uri` (registered for that client) with `state`; without a hint the
        /// person is asked on a page.
        public static let logout = Endpoint<OpenIDLogoutQuery, RawBody>(.get, "/oauth/logout", access: .anyone)
            .operation("endSession", "Sign out (RP-initiated logout)", tags: "OpenID Connect")
            .errors([400: []], format: .page)
        /// `POST /oauth/logout`: sign out, confirmed by the person. The person's answer to the question (with `csrf`),
        /// or a logout request by POST.
        public static let logoutForm = Endpoint<FormBody, RawBody>(.post, "/oauth/logout", access: .anyone)
            .operation("endSessionForm", "Sign out, confirmed by the person", tags: "OpenID Connect")
            .errors([400: [], 403: []], format: .page)
            .form([.urlencoded], [.text("csrf"), .text("id_token_hint"), .text("post_logout_redirect_uri"), .text("state"), .text("client_id")],
                  required: false)
        /// Every operation of the OpenID Connect provider.
        public static let all: [any EndpointDeclaration] = [discovery, authorize, authorizeForm, token, userinfo, userinfoForm, revoke, introspect,
                                                            logout, logoutForm]
    }

    /// Liveness, readiness and the Prometheus metrics.
    public enum Health {
        /// `GET /health`: readiness check. Ready only when the database answers: a load balancer should not send
        /// traffic otherwise.
        public static let health = Endpoint<NoContent, RawBody>(.get, "/health", access: .anyone)
            .operation("getHealth", "Readiness check", tags: "Operations")
        /// `GET /health/live`: liveness check. The process answers HTTP; the database is not asked (use `/health` for
        /// readiness). Also the benchmarks' plaintext yardstick.
        public static let live = Endpoint<NoContent, RawBody>(.get, "/health/live", access: .anyone)
            .operation("getLiveness", "Liveness check", tags: "Operations")
        /// Prometheus text; a bearer token when `GATEHOUSE_METRICS_TOKEN` is set (checked here).
        public static let metrics = Endpoint<NoContent, RawBody>(.get, "/metrics", access: .anyone)
            .operation("getMetrics", "Prometheus metrics", tags: "Operations")
        /// Every operation of the health checks and metrics.
        public static let all: [any EndpointDeclaration] = [health, live, metrics]
    }

    /// The developer console (docs/sign-to-login.md): Sign To Login apps and their keys.
    public enum Console {
        /// `GET /console`: the developer console: my apps. Server-rendered HTML without script. Signed in (the
        /// `gh_console` session cookie), the list of my apps with their actions and the form to add one.
        public static let home = Endpoint<NoContent, RawBody>(.get, "/console", access: .anyone)
            .operation("consoleHome", "The developer console: my apps", tags: "Developer console")
        /// `GET /console/login`: the console's sign-in page. Sets the `gh_console_csrf` cookie (`HttpOnly`,
        /// `SameSite=Lax`) that every form must echo.
        public static let loginPage = Endpoint<NoContent, RawBody>(.get, "/console/login", access: .anyone)
            .operation("consoleLoginPage", "The console's sign-in page", tags: "Developer console")
        /// `POST /console/login`: sign in to the console. With the account's email and password; sets the `gh_console`
        /// session cookie (`HttpOnly`, `SameSite=Lax`, `Secure` outside development).
        public static let signIn = Endpoint<FormBody, RawBody>(.post, "/console/login", success: 303, access: .anyone)
            .operation("consoleSignIn", "Sign in to the console", tags: "Developer console")
            .errors([400: [], 401: [], 403: [], 429: []], format: .page)
            .form([.urlencoded], [.text("csrf"), .text("email"), .text("password")], required: false)
        /// `POST /console/logout`: sign out of the console. Ends the session and clears its cookie.
        public static let signOut = Endpoint<FormBody, RawBody>(.post, "/console/logout", success: 303, access: .anyone)
            .operation("consoleSignOut", "Sign out of the console", tags: "Developer console")
            .form([.urlencoded], [.text("csrf")], required: false)
        /// `POST /console/apps`: add an app from the console. The five fields and an optional icon; the answer shows
        /// the new API key once.
        public static let create = Endpoint<FormBody, RawBody>(.post, "/console/apps", access: .anyone)
            .operation("consoleAddApp", "Add an app from the console", tags: "Developer console")
            .errors([400: [], 403: []], format: .page)
            .form([.multipart], [.text("csrf"), .text("name"), .text("bundleId"), .text("email"), .text("website"), .text("icon", .file)])
        /// `POST /console/apps/{id}/{action}`: disable, enable or rotate an app's key from the console.
        public static let change = Endpoint<FormBody, RawBody>(.post, "/console/apps/{id}/{action}", access: .anyone)
            .operation("consoleChangeApp", "Disable, enable or rotate an app's key from the console", tags: "Developer console")
            .errors([400: [], 403: [], 404: []], format: .page)
            .uuid(notFound: nil)
            .path("action", .choice(["disable", "enable", "rotate"]))
            .form([.urlencoded], [.text("csrf")], required: false)
        /// Every operation of the developers' console.
        public static let all: [any EndpointDeclaration] = [home, loginPage, signIn, signOut, create, change]
    }

    /// The operator console (docs/operators.md).
    public enum OperatorConsole {
        /// What an operator can do to an account (`POST /operator/accounts/{id}/{action}`): the
        /// server's operator actions that act on one account.
        public static let accountActions = ["revoke-sessions", "lock", "unlock", "resend-confirmation", "send-recovery-code", "unbind-client",
                                            "remove-second-factors", "credit", "reverse"]
        /// `GET /operator`: the operator console: find an account. Server-rendered HTML without script, for a signed-in
        /// operator (the `gh_operator` cookie).
        public static let home = Endpoint<NoContent, RawBody>(.get, "/operator", access: .anyone)
            .operation("operatorHome", "The operator console: find an account", tags: "Operator console")
        /// `GET /operator/login`: the operator console: sign-in page. Name, password and the code of their
        /// authenticator app (TOTP).
        public static let loginPage = Endpoint<NoContent, RawBody>(.get, "/operator/login", access: .anyone)
            .operation("operatorLoginPage", "The operator console: sign-in page", tags: "Operator console")
        /// `POST /operator/login`: sign an operator in. Unknown name, wrong password, wrong or reused code and a
        /// disabled operator all answer the same. Failures are counted per name and per address.
        public static let signIn = Endpoint<FormBody, RawBody>(.post, "/operator/login", success: 303, access: .anyone)
            .operation("operatorSignIn", "Sign an operator in", tags: "Operator console")
            .errors([401: [], 403: [], 429: []], format: .page)
            .form([.urlencoded], [.text("csrf"), .text("name"), .text("password"), .text("code")])
        /// `POST /operator/logout`: sign an operator out.
        public static let signOut = Endpoint<FormBody, RawBody>(.post, "/operator/logout", success: 303, access: .anyone)
            .operation("operatorSignOut", "Sign an operator out", tags: "Operator console")
            .form([.urlencoded], [.text("csrf")])
        /// `POST /operator/find`: find an account. The query is posted, never put in a URL.
        public static let find = Endpoint<FormBody, RawBody>(.post, "/operator/find", success: 303, access: .anyone)
            .operation("operatorFind", "Find an account", tags: "Operator console")
            .errors([404: [], 403: []], format: .page)
            .form([.urlencoded], [.text("csrf"), .text("query")])
        /// `GET /operator/accounts/{id}`: an account as an operator sees it. Profile, lock, sessions, client record,
        /// wallet and its last movements, Sign To Login enrolments and apps, the latest events, and the actions the
        /// operators role allows.
        public static let account = Endpoint<NoContent, RawBody>(.get, "/operator/accounts/{id}", access: .anyone)
            .operation("operatorAccount", "An account as an operator sees it", tags: "Operator console")
            .errors([404: []], format: .page)
            .uuid(notFound: nil)
        /// `POST /operator/accounts/{id}/{action}`: act on an account. Each action needs a reason and is in the audit
        /// trail as `operator` and the operators name.
        public static let act = Endpoint<FormBody, RawBody>(.post, "/operator/accounts/{id}/{action}", success: 303, access: .anyone)
            .operation("operatorAct", "Act on an account", tags: "Operator console")
            .errors([400: [], 403: [], 404: []], format: .page)
            .uuid(notFound: nil)
            .path("action", .choice(OperatorConsole.accountActions))
            .form([.urlencoded], [.text("csrf"), .text("reason"), .text("amount"), .text("reference"), .text("transfer")])
        /// `GET /operator/audit`: the audit trail, searched by account, actor, event and time.
        public static let audit = Endpoint<NoContent, RawBody>(.get, "/operator/audit", access: .anyone,
                                                                 query: [QueryParameter("kind", .text), QueryParameter("actorType", .text), QueryParameter("actor", .text),
                                                                         QueryParameter("account", .text), QueryParameter("since", .text), QueryParameter("until", .text),
                                                                         QueryParameter("before", .text)])
            .operation("operatorAudit", "The audit trail, filtered", tags: "Operator console")
            .errors([400: []], format: .page)
        /// `GET /operator/outbox`: the outbox. The latest 100 messages: address, subject, delivery state, attempts,
        /// last error. Never a body or a code.
        public static let outbox = Endpoint<NoContent, RawBody>(.get, "/operator/outbox", access: .anyone)
            .operation("operatorOutbox", "The outbox", tags: "Operator console")
        /// `POST /operator/outbox/find`: what was sent to an address.
        public static let outboxFind = Endpoint<FormBody, RawBody>(.post, "/operator/outbox/find", access: .anyone)
            .operation("operatorOutboxFind", "What was sent to an address", tags: "Operator console")
            .errors([403: []], format: .page)
            .form([.urlencoded], [.text("csrf"), .text("address")])
        /// `POST /operator/outbox/{id}/retry`: retry a message that failed for good. Support and admin; with a reason,
        /// audited as `outbox.retried`.
        public static let outboxRetry = Endpoint<FormBody, RawBody>(.post, "/operator/outbox/{id}/retry", success: 303, access: .anyone)
            .operation("operatorOutboxRetry", "Retry a message that failed for good", tags: "Operator console")
            .errors([400: [], 403: []], format: .page)
            .uuid(notFound: nil)
            .form([.urlencoded], [.text("csrf"), .text("reason")])
        /// `GET /operator/clients`: client records. Find a record by phone; admins import files.
        public static let clients = Endpoint<NoContent, RawBody>(.get, "/operator/clients", access: .anyone)
            .operation("operatorClients", "Client records", tags: "Operator console")
        /// `POST /operator/clients/find`: find a client record.
        public static let clientsFind = Endpoint<FormBody, RawBody>(.post, "/operator/clients/find", access: .anyone)
            .operation("operatorClientsFind", "Find a client record", tags: "Operator console")
            .errors([404: [], 403: []], format: .page)
            .form([.urlencoded], [.text("csrf"), .text("phone")])
        /// `POST /operator/clients/import`: preview or apply an import of client records. Admins. A file uploaded is
        /// previewed (what would be created, changed, left, refused, and why); the previews form applies it. Audited as
        /// `clients.imported`.
        public static let clientsImport = Endpoint<FormBody, RawBody>(.post, "/operator/clients/import", access: .anyone)
            .operation("operatorClientsImport", "Preview or apply an import of client records", tags: "Operator console")
            .errors([400: [], 403: []], format: .page)
            .form([.urlencoded, .multipart], [.text("csrf"), .text("file"), .text("carried"), .text("format"), .text("apply")])
        /// Every operation of the operator console.
        public static let all: [any EndpointDeclaration] = [home, loginPage, signIn, signOut, find, account, act, audit, outbox, outboxFind, outboxRetry,
                                                             clients, clientsFind, clientsImport]
    }

    /// The payment provider's webhook and the page a top-up returns to.
    public enum Payments {
        /// Stripe's webhook. Served whatever the provider (the local one's notifications are in
        /// Stripe's format too, signed with a secret nobody outside holds); 404 with top-ups off.
        public static let webhook = Endpoint<RawBody, RawBody>(.post, "/webhooks/stripe", access: .anyone)
            .operation("stripeWebhook", "Stripe's notifications", tags: "Payments")
            .errors([400: [.notificationRefused], 404: [.topUpNotFound]])
        /// Where the provider sends the person back after its page.
        public static let returnPage = Endpoint<NoContent, RawBody>(.get, "/topup-return", access: .anyone)
            .operation("topUpReturnPage", "Back from the payment page", tags: "Payments")
        /// Every operation of the payment provider's side.
        public static let all: [any EndpointDeclaration] = [webhook, returnPage]
        /// The local payment provider's page and its form (`GATEHOUSE_TOPUP_PROVIDER=local`, for
        /// development and tests): not in the API's document, as a deployed server has a real provider.
        public static let localPage = Endpoint<NoContent, RawBody>(.get, "/dev/payments/{id}", access: .anyone)
        /// `POST /dev/payments/{id}`: the local stand-in's payment page answered (development only).
        public static let localPay = Endpoint<FormBody, RawBody>(.post, "/dev/payments/{id}", access: .anyone)
    }

    /// The Sign To Login profile page (docs/sign-to-login.md, "The profile").
    public enum SignatureProfile {
        /// `GET /signature-profile`: the Sign To Login profile page. Server-rendered HTML without script, in the
        /// reader's language. Signed out: the address to mail a sign-in code to. Signed in (the `gh_profile` cookie, 30
        /// minutes, `SameSite=Strict`): the profile, its optional fields and picture to edit, and the deletion of the
        /// profile with the signatures.
        public static let page = Endpoint<NoContent, RawBody>(.get, "/signature-profile", access: .anyone)
            .operation("signatureProfilePage", "The Sign To Login profile page", tags: "Sign To Login")
            .errors([404: []], format: .page)
        /// `POST /signature-profile/code`: mail a sign-in code. A code goes to the address when it has a Sign To Login
        /// profile; the page answers the same for any address (it tells nobody who enrolled). Codes are budgeted per
        /// address and client as everywhere.
        public static let requestCode = Endpoint<FormBody, RawBody>(.post, "/signature-profile/code", access: .anyone)
            .operation("signatureProfileCode", "Mail a sign-in code", tags: "Sign To Login")
            .errors([400: [], 403: [], 429: []], format: .page)
            .form([.urlencoded], [.text("csrf"), .text("email")])
        /// `POST /signature-profile/sign-in`: sign in with the mailed code.
        public static let signIn = Endpoint<FormBody, RawBody>(.post, "/signature-profile/sign-in", success: 303, access: .anyone)
            .operation("signatureProfileSignIn", "Sign in with the mailed code", tags: "Sign To Login")
            .errors([401: [], 403: [], 429: []], format: .page)
            .form([.urlencoded], [.text("csrf"), .text("email"), .text("code")])
        /// `POST /signature-profile/save`: save the optional fields. Each field takes only its characters (as `PATCH
        /// /v1/me/signature-profile`); an empty one clears it.
        public static let save = Endpoint<FormBody, RawBody>(.post, "/signature-profile/save", success: 303, access: .anyone)
            .operation("signatureProfileSave", "Save the optional fields", tags: "Sign To Login")
            .errors([400: [], 403: []], format: .page)
            .form([.urlencoded], [.text("csrf"), .text("phone_number"), .text("company_name"), .text("position"), .text("birthday"), .text("sex")])
        /// `POST /signature-profile/photo`: upload or remove the picture.
        public static let photoUpload = Endpoint<FormBody, RawBody>(.post, "/signature-profile/photo", success: 303, access: .anyone)
            .operation("signatureProfilePhotoUpload", "Upload or remove the picture", tags: "Sign To Login")
            .errors([400: [], 403: []], format: .page)
            .form([.multipart], [.text("csrf"), .text("photo", .file), .text("remove")])
        /// `GET /signature-profile/photo`: the signed-in person's picture.
        public static let photo = Endpoint<NoContent, RawBody>(.get, "/signature-profile/photo", access: .anyone)
            .operation("signatureProfilePhoto", "The signed-in person's picture", tags: "Sign To Login")
            .errors([404: []], format: .bare)
        /// `POST /signature-profile/delete`: delete the profile and the signatures. As `DELETE
        /// /v1/me/signature-profile`; the page's session ends with it.
        public static let delete = Endpoint<FormBody, RawBody>(.post, "/signature-profile/delete", access: .anyone)
            .operation("signatureProfileDelete", "Delete the profile and the signatures", tags: "Sign To Login")
            .errors([400: [], 403: []], format: .page)
            .form([.urlencoded], [.text("csrf"), .text("confirm")])
        /// `POST /signature-profile/sign-out`: sign out of the profile page.
        public static let signOut = Endpoint<FormBody, RawBody>(.post, "/signature-profile/sign-out", success: 303, access: .anyone)
            .operation("signatureProfileSignOut", "Sign out of the profile page", tags: "Sign To Login")
            .form([.urlencoded], [.text("csrf")])
        /// Every operation of the signature profile pages.
        public static let all: [any EndpointDeclaration] = [page, requestCode, signIn, save, photoUpload, photo, delete, signOut]
    }
}
