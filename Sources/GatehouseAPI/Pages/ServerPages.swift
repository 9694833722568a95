/// The server's own pages and machine endpoints, beside the apps' APIs: every route the server
/// serves is declared in this module, these included, so the OpenAPI document is built from one
/// list and a route's method, path, success status and access are read in one place. Their
/// bodies are forms (`FormBody`) or raw bytes (`RawBody`): HTML, a webhook's payload, metrics.
public enum ServerPages {
    /// The API's own description: the root's signposts, the OpenAPI document as JSON and as YAML, its reference page.
    public enum APIDocument {
        public static let root = Endpoint<NoContent, RawBody>(.get, "/", access: .anyone)
            .operation("getRoot", "Where to go next", tags: "Operations")
        public static let openAPI = Endpoint<NoContent, RawBody>(.get, GatehouseAPI.APIReference.openAPI, access: .anyone)
            .operation("getOpenAPIDocument", "This OpenAPI 3.1 document", tags: "Operations")
        public static let openAPIYAML = Endpoint<NoContent, RawBody>(.get, GatehouseAPI.APIReference.openAPIYAML, access: .anyone)
            .operation("getOpenAPIDocumentYAML", "This OpenAPI 3.1 document, as YAML", tags: "Operations")
        public static let docs = Endpoint<NoContent, RawBody>(.get, GatehouseAPI.APIReference.docs, access: .anyone)
            .operation("getAPIReference", "The API reference page", tags: "Operations")
        public static let all: [any EndpointDeclaration] = [root, openAPI, openAPIYAML, docs]
    }

    /// What other services read to trust Gatehouse's tokens (docs/oidc.md).
    public enum WellKnown {
        /// The public keys that sign the tokens (RFC 7517 §5): every key published, the next one before it signs
        /// and a retired one until its tokens have expired.
        public static let keySet = Endpoint<NoContent, RawBody>(.get, "/.well-known/jwks.json", access: .anyone)
            .operation("getKeySet", "The keys that sign Gatehouse's tokens (JWKS)", tags: "Tokens")
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
        public static let discovery = Endpoint<NoContent, RawBody>(.get, "/.well-known/openid-configuration", access: .anyone)
            .operation("getOpenIDConfiguration", "The OpenID Connect provider's metadata (discovery)", tags: "OpenID Connect")
        public static let authorize = Endpoint<OpenIDAuthorizationQuery, RawBody>(.get, "/oauth/authorize", access: .anyone)
            .operation("authorize", "Start a sign-in for a client: the sign-in page, or a redirect with a code", tags: "OpenID Connect")
            .errors([400: []], format: .page)
        public static let authorizeForm = Endpoint<FormBody, RawBody>(.post, "/oauth/authorize", access: .anyone)
            .operation("authorizeForm", "The sign-in, second-step and consent forms (and an authorization request by POST)", tags: "OpenID Connect")
            .errors([400: [], 401: [], 403: [], 429: []], format: .page)
            .form([.urlencoded], authorizationFields + [.text("csrf"), .text("step"), .text("identifier"), .text("password"), .text("challenge"),
                                                        .text("code"), .text("decision")], required: false)
        public static let token = Endpoint<FormBody, RawBody>(.post, "/oauth/token", access: .anyone)
            .operation("token", "Exchange a code, a refresh token or a client's credentials for tokens", tags: "OpenID Connect")
            .errors([400: [], 401: [], 429: []], format: .oauth)
            .form([.urlencoded], [.text("grant_type"), .text("code"), .text("redirect_uri"), .text("code_verifier"), .text("refresh_token"),
                                  .text("scope"), .text("client_id"), .text("client_secret")])
        public static let userinfo = Endpoint<NoContent, RawBody>(.get, "/oauth/userinfo", access: .anyone)
            .operation("userinfo", "The signed-in person's claims, as the access token's scopes allow", tags: "OpenID Connect")
            .errors([401: [], 403: []], format: .bare)
        public static let userinfoForm = Endpoint<NoContent, RawBody>(.post, "/oauth/userinfo", access: .anyone)
            .operation("userinfoPost", "The signed-in person's claims (POST)", tags: "OpenID Connect")
            .errors([401: [], 403: []], format: .bare)
        public static let revoke = Endpoint<FormBody, RawBody>(.post, "/oauth/revoke", access: .anyone)
            .operation("revokeToken", "Revoke a token of the calling client (RFC 7009)", tags: "OpenID Connect")
            .errors([400: [], 401: [], 429: []], format: .oauth)
            .form([.urlencoded], [.text("token"), .text("token_type_hint"), .text("client_id"), .text("client_secret")])
        public static let introspect = Endpoint<FormBody, RawBody>(.post, "/oauth/introspect", access: .anyone)
            .operation("introspectToken", "What a token of the calling client is (RFC 7662)", tags: "OpenID Connect")
            .errors([400: [], 401: [], 429: []], format: .oauth)
            .form([.urlencoded], [.text("token"), .text("token_type_hint"), .text("client_id"), .text("client_secret")])
        public static let logout = Endpoint<OpenIDLogoutQuery, RawBody>(.get, "/oauth/logout", access: .anyone)
            .operation("endSession", "Sign out (RP-initiated logout)", tags: "OpenID Connect")
            .errors([400: []], format: .page)
        public static let logoutForm = Endpoint<FormBody, RawBody>(.post, "/oauth/logout", access: .anyone)
            .operation("endSessionForm", "Sign out, confirmed by the person", tags: "OpenID Connect")
            .errors([400: [], 403: []], format: .page)
            .form([.urlencoded], [.text("csrf"), .text("id_token_hint"), .text("post_logout_redirect_uri"), .text("state"), .text("client_id")],
                  required: false)
        public static let all: [any EndpointDeclaration] = [discovery, authorize, authorizeForm, token, userinfo, userinfoForm, revoke, introspect,
                                                            logout, logoutForm]
    }

    /// Liveness, readiness and the Prometheus metrics.
    public enum Health {
        public static let health = Endpoint<NoContent, RawBody>(.get, "/health", access: .anyone)
            .operation("getHealth", "Readiness check", tags: "Operations")
        public static let live = Endpoint<NoContent, RawBody>(.get, "/health/live", access: .anyone)
            .operation("getLiveness", "Liveness check", tags: "Operations")
        /// Prometheus text; a bearer token when `GATEHOUSE_METRICS_TOKEN` is set (checked here).
        public static let metrics = Endpoint<NoContent, RawBody>(.get, "/metrics", access: .anyone)
            .operation("getMetrics", "Prometheus metrics", tags: "Operations")
        public static let all: [any EndpointDeclaration] = [health, live, metrics]
    }

    /// The developer console (docs/sign-to-login.md): Sign To Login apps and their keys.
    public enum Console {
        public static let home = Endpoint<NoContent, RawBody>(.get, "/console", access: .anyone)
            .operation("consoleHome", "The developer console: my apps", tags: "Developer console")
        public static let loginPage = Endpoint<NoContent, RawBody>(.get, "/console/login", access: .anyone)
            .operation("consoleLoginPage", "The console's sign-in page", tags: "Developer console")
        public static let signIn = Endpoint<FormBody, RawBody>(.post, "/console/login", success: 303, access: .anyone)
            .operation("consoleSignIn", "Sign in to the console", tags: "Developer console")
            .errors([400: [], 401: [], 403: [], 429: []], format: .page)
            .form([.urlencoded], [.text("csrf"), .text("email"), .text("password")], required: false)
        public static let signOut = Endpoint<FormBody, RawBody>(.post, "/console/logout", success: 303, access: .anyone)
            .operation("consoleSignOut", "Sign out of the console", tags: "Developer console")
            .form([.urlencoded], [.text("csrf")], required: false)
        public static let create = Endpoint<FormBody, RawBody>(.post, "/console/apps", access: .anyone)
            .operation("consoleAddApp", "Add an app from the console", tags: "Developer console")
            .errors([400: [], 403: []], format: .page)
            .form([.multipart], [.text("csrf"), .text("name"), .text("bundleId"), .text("email"), .text("website"), .text("icon", .file)])
        public static let change = Endpoint<FormBody, RawBody>(.post, "/console/apps/{id}/{action}", access: .anyone)
            .operation("consoleChangeApp", "Disable, enable or rotate an app's key from the console", tags: "Developer console")
            .errors([400: [], 403: [], 404: []], format: .page)
            .uuid(notFound: nil)
            .path("action", .choice(["disable", "enable", "rotate"]))
            .form([.urlencoded], [.text("csrf")], required: false)
        public static let all: [any EndpointDeclaration] = [home, loginPage, signIn, signOut, create, change]
    }

    /// The operator console (docs/operators.md).
    public enum OperatorConsole {
        /// What an operator can do to an account (`POST /operator/accounts/{id}/{action}`): the
        /// server's operator actions that act on one account.
        public static let accountActions = ["revoke-sessions", "lock", "unlock", "resend-confirmation", "send-recovery-code", "unbind-client",
                                            "remove-second-factors", "credit", "reverse"]
        public static let home = Endpoint<NoContent, RawBody>(.get, "/operator", access: .anyone)
            .operation("operatorHome", "The operator console: find an account", tags: "Operator console")
        public static let loginPage = Endpoint<NoContent, RawBody>(.get, "/operator/login", access: .anyone)
            .operation("operatorLoginPage", "The operator console: sign-in page", tags: "Operator console")
        public static let signIn = Endpoint<FormBody, RawBody>(.post, "/operator/login", success: 303, access: .anyone)
            .operation("operatorSignIn", "Sign an operator in", tags: "Operator console")
            .errors([401: [], 403: [], 429: []], format: .page)
            .form([.urlencoded], [.text("csrf"), .text("name"), .text("password"), .text("code")])
        public static let signOut = Endpoint<FormBody, RawBody>(.post, "/operator/logout", success: 303, access: .anyone)
            .operation("operatorSignOut", "Sign an operator out", tags: "Operator console")
            .form([.urlencoded], [.text("csrf")])
        public static let find = Endpoint<FormBody, RawBody>(.post, "/operator/find", success: 303, access: .anyone)
            .operation("operatorFind", "Find an account", tags: "Operator console")
            .errors([404: [], 403: []], format: .page)
            .form([.urlencoded], [.text("csrf"), .text("query")])
        public static let account = Endpoint<NoContent, RawBody>(.get, "/operator/accounts/{id}", access: .anyone)
            .operation("operatorAccount", "An account as an operator sees it", tags: "Operator console")
            .errors([404: []], format: .page)
            .uuid(notFound: nil)
        public static let act = Endpoint<FormBody, RawBody>(.post, "/operator/accounts/{id}/{action}", success: 303, access: .anyone)
            .operation("operatorAct", "Act on an account", tags: "Operator console")
            .errors([400: [], 403: [], 404: []], format: .page)
            .uuid(notFound: nil)
            .path("action", .choice(OperatorConsole.accountActions))
            .form([.urlencoded], [.text("csrf"), .text("reason"), .text("amount"), .text("reference"), .text("transfer")])
        public static let audit = Endpoint<NoContent, RawBody>(.get, "/operator/audit", access: .anyone,
                                                                 query: [QueryParameter("kind", .text), QueryParameter("actorType", .text), QueryParameter("actor", .text),
                                                                         QueryParameter("account", .text), QueryParameter("since", .text), QueryParameter("until", .text),
                                                                         QueryParameter("before", .text)])
            .operation("operatorAudit", "The audit trail, filtered", tags: "Operator console")
            .errors([400: []], format: .page)
        public static let outbox = Endpoint<NoContent, RawBody>(.get, "/operator/outbox", access: .anyone)
            .operation("operatorOutbox", "The outbox", tags: "Operator console")
        public static let outboxFind = Endpoint<FormBody, RawBody>(.post, "/operator/outbox/find", access: .anyone)
            .operation("operatorOutboxFind", "What was sent to an address", tags: "Operator console")
            .errors([403: []], format: .page)
            .form([.urlencoded], [.text("csrf"), .text("address")])
        public static let outboxRetry = Endpoint<FormBody, RawBody>(.post, "/operator/outbox/{id}/retry", success: 303, access: .anyone)
            .operation("operatorOutboxRetry", "Retry a message that failed for good", tags: "Operator console")
            .errors([400: [], 403: []], format: .page)
            .uuid(notFound: nil)
            .form([.urlencoded], [.text("csrf"), .text("reason")])
        public static let clients = Endpoint<NoContent, RawBody>(.get, "/operator/clients", access: .anyone)
            .operation("operatorClients", "Client records", tags: "Operator console")
        public static let clientsFind = Endpoint<FormBody, RawBody>(.post, "/operator/clients/find", access: .anyone)
            .operation("operatorClientsFind", "Find a client record", tags: "Operator console")
            .errors([404: [], 403: []], format: .page)
            .form([.urlencoded], [.text("csrf"), .text("phone")])
        public static let clientsImport = Endpoint<FormBody, RawBody>(.post, "/operator/clients/import", access: .anyone)
            .operation("operatorClientsImport", "Preview or apply an import of client records", tags: "Operator console")
            .errors([400: [], 403: []], format: .page)
            .form([.urlencoded, .multipart], [.text("csrf"), .text("file"), .text("carried"), .text("format"), .text("apply")])
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
        public static let all: [any EndpointDeclaration] = [webhook, returnPage]
        /// The local payment provider's page and its form (`GATEHOUSE_TOPUP_PROVIDER=local`, for
        /// development and tests): not in the API's document, as a deployed server has a real provider.
        public static let localPage = Endpoint<NoContent, RawBody>(.get, "/dev/payments/{id}", access: .anyone)
        public static let localPay = Endpoint<FormBody, RawBody>(.post, "/dev/payments/{id}", access: .anyone)
    }

    /// The Sign To Login profile page (docs/sign-to-login.md, "The profile").
    public enum SignatureProfile {
        public static let page = Endpoint<NoContent, RawBody>(.get, "/signature-profile", access: .anyone)
            .operation("signatureProfilePage", "The Sign To Login profile page", tags: "Sign To Login")
            .errors([404: []], format: .page)
        public static let requestCode = Endpoint<FormBody, RawBody>(.post, "/signature-profile/code", access: .anyone)
            .operation("signatureProfileCode", "Mail a sign-in code", tags: "Sign To Login")
            .errors([400: [], 403: [], 429: []], format: .page)
            .form([.urlencoded], [.text("csrf"), .text("email")])
        public static let signIn = Endpoint<FormBody, RawBody>(.post, "/signature-profile/sign-in", success: 303, access: .anyone)
            .operation("signatureProfileSignIn", "Sign in with the mailed code", tags: "Sign To Login")
            .errors([401: [], 403: [], 429: []], format: .page)
            .form([.urlencoded], [.text("csrf"), .text("email"), .text("code")])
        public static let save = Endpoint<FormBody, RawBody>(.post, "/signature-profile/save", success: 303, access: .anyone)
            .operation("signatureProfileSave", "Save the optional fields", tags: "Sign To Login")
            .errors([400: [], 403: []], format: .page)
            .form([.urlencoded], [.text("csrf"), .text("phone_number"), .text("company_name"), .text("position"), .text("birthday"), .text("sex")])
        public static let photoUpload = Endpoint<FormBody, RawBody>(.post, "/signature-profile/photo", success: 303, access: .anyone)
            .operation("signatureProfilePhotoUpload", "Upload or remove the picture", tags: "Sign To Login")
            .errors([400: [], 403: []], format: .page)
            .form([.multipart], [.text("csrf"), .text("photo", .file), .text("remove")])
        public static let photo = Endpoint<NoContent, RawBody>(.get, "/signature-profile/photo", access: .anyone)
            .operation("signatureProfilePhoto", "The signed-in person's picture", tags: "Sign To Login")
            .errors([404: []], format: .bare)
        public static let delete = Endpoint<FormBody, RawBody>(.post, "/signature-profile/delete", access: .anyone)
            .operation("signatureProfileDelete", "Delete the profile and the signatures", tags: "Sign To Login")
            .errors([400: [], 403: []], format: .page)
            .form([.urlencoded], [.text("csrf"), .text("confirm")])
        public static let signOut = Endpoint<FormBody, RawBody>(.post, "/signature-profile/sign-out", success: 303, access: .anyone)
            .operation("signatureProfileSignOut", "Sign out of the profile page", tags: "Sign To Login")
            .form([.urlencoded], [.text("csrf")])
        public static let all: [any EndpointDeclaration] = [page, requestCode, signIn, save, photoUpload, photo, delete, signOut]
    }
}
