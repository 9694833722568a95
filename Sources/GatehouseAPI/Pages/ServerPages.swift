/// The server's own pages and machine endpoints, beside the apps' APIs: every route the server
/// serves is declared in this module, these included, so the OpenAPI document is built from one
/// list and a route's method, path, success status and access are read in one place. Their
/// bodies are forms (`FormBody`) or raw bytes (`RawBody`): HTML, a webhook's payload, metrics.
public enum ServerPages {
    /// The API's own description: the root's signposts, the OpenAPI document as JSON and as YAML, its reference page.
    public enum APIDocument {
        public static let root = Endpoint<NoContent, RawBody>(.get, "/", access: .anyone)
        public static let openAPI = Endpoint<NoContent, RawBody>(.get, GatehouseAPI.APIReference.openAPI, access: .anyone)
        public static let openAPIYAML = Endpoint<NoContent, RawBody>(.get, GatehouseAPI.APIReference.openAPIYAML, access: .anyone)
        public static let docs = Endpoint<NoContent, RawBody>(.get, GatehouseAPI.APIReference.docs, access: .anyone)
        public static let all: [any EndpointDeclaration] = [root, openAPI, openAPIYAML, docs]
    }

    /// Liveness, readiness and the Prometheus metrics.
    public enum Health {
        public static let health = Endpoint<NoContent, RawBody>(.get, "/health", access: .anyone)
        public static let live = Endpoint<NoContent, RawBody>(.get, "/health/live", access: .anyone)
        /// Prometheus text; a bearer token when `GATEHOUSE_METRICS_TOKEN` is set (checked here).
        public static let metrics = Endpoint<NoContent, RawBody>(.get, "/metrics", access: .anyone)
        public static let all: [any EndpointDeclaration] = [health, live, metrics]
    }

    /// The developer console (docs/sign-to-login.md): Sign To Login apps and their keys.
    public enum Console {
        public static let home = Endpoint<NoContent, RawBody>(.get, "/console", access: .anyone)
        public static let loginPage = Endpoint<NoContent, RawBody>(.get, "/console/login", access: .anyone)
        public static let signIn = Endpoint<FormBody, RawBody>(.post, "/console/login", success: 303, access: .anyone)
        public static let signOut = Endpoint<FormBody, RawBody>(.post, "/console/logout", success: 303, access: .anyone)
        public static let create = Endpoint<FormBody, RawBody>(.post, "/console/apps", access: .anyone)
        public static let change = Endpoint<FormBody, RawBody>(.post, "/console/apps/{id}/{action}", access: .anyone)
        public static let all: [any EndpointDeclaration] = [home, loginPage, signIn, signOut, create, change]
    }

    /// The operator console (docs/operators.md).
    public enum OperatorConsole {
        public static let home = Endpoint<NoContent, RawBody>(.get, "/operator", access: .anyone)
        public static let loginPage = Endpoint<NoContent, RawBody>(.get, "/operator/login", access: .anyone)
        public static let signIn = Endpoint<FormBody, RawBody>(.post, "/operator/login", success: 303, access: .anyone)
        public static let signOut = Endpoint<FormBody, RawBody>(.post, "/operator/logout", success: 303, access: .anyone)
        public static let find = Endpoint<FormBody, RawBody>(.post, "/operator/find", success: 303, access: .anyone)
        public static let account = Endpoint<NoContent, RawBody>(.get, "/operator/accounts/{id}", access: .anyone)
        public static let act = Endpoint<FormBody, RawBody>(.post, "/operator/accounts/{id}/{action}", success: 303, access: .anyone)
        public static let audit = Endpoint<NoContent, RawBody>(.get, "/operator/audit", access: .anyone,
                                                                 query: [QueryParameter("kind", .text), QueryParameter("actorType", .text), QueryParameter("actor", .text),
                                                                         QueryParameter("account", .text), QueryParameter("since", .text), QueryParameter("until", .text),
                                                                         QueryParameter("before", .text)])
        public static let outbox = Endpoint<NoContent, RawBody>(.get, "/operator/outbox", access: .anyone)
        public static let outboxFind = Endpoint<FormBody, RawBody>(.post, "/operator/outbox/find", access: .anyone)
        public static let outboxRetry = Endpoint<FormBody, RawBody>(.post, "/operator/outbox/{id}/retry", success: 303, access: .anyone)
        public static let clients = Endpoint<NoContent, RawBody>(.get, "/operator/clients", access: .anyone)
        public static let clientsFind = Endpoint<FormBody, RawBody>(.post, "/operator/clients/find", access: .anyone)
        public static let clientsImport = Endpoint<FormBody, RawBody>(.post, "/operator/clients/import", access: .anyone)
        public static let all: [any EndpointDeclaration] = [home, loginPage, signIn, signOut, find, account, act, audit, outbox, outboxFind, outboxRetry,
                                                             clients, clientsFind, clientsImport]
    }

    /// The payment provider's webhook and the page a top-up returns to.
    public enum Payments {
        /// Stripe's webhook. Served whatever the provider (the local one's notifications are in
        /// Stripe's format too, signed with a secret nobody outside holds); 404 with top-ups off.
        public static let webhook = Endpoint<RawBody, RawBody>(.post, "/webhooks/stripe", access: .anyone)
        /// Where the provider sends the person back after its page.
        public static let returnPage = Endpoint<NoContent, RawBody>(.get, "/topup-return", access: .anyone)
        public static let all: [any EndpointDeclaration] = [webhook, returnPage]
        /// The local payment provider's page and its form (`GATEHOUSE_TOPUP_PROVIDER=local`, for
        /// development and tests): not in the API's document, as a deployed server has a real provider.
        public static let localPage = Endpoint<NoContent, RawBody>(.get, "/dev/payments/{id}", access: .anyone)
        public static let localPay = Endpoint<FormBody, RawBody>(.post, "/dev/payments/{id}", access: .anyone)
    }

    /// The Sign To Login profile page (docs/sign-to-login.md, "The profile").
    public enum SignatureProfile {
        public static let page = Endpoint<NoContent, RawBody>(.get, "/signature-profile", access: .anyone)
        public static let requestCode = Endpoint<FormBody, RawBody>(.post, "/signature-profile/code", access: .anyone)
        public static let signIn = Endpoint<FormBody, RawBody>(.post, "/signature-profile/sign-in", success: 303, access: .anyone)
        public static let save = Endpoint<FormBody, RawBody>(.post, "/signature-profile/save", success: 303, access: .anyone)
        public static let photoUpload = Endpoint<FormBody, RawBody>(.post, "/signature-profile/photo", success: 303, access: .anyone)
        public static let photo = Endpoint<NoContent, RawBody>(.get, "/signature-profile/photo", access: .anyone)
        public static let delete = Endpoint<FormBody, RawBody>(.post, "/signature-profile/delete", access: .anyone)
        public static let signOut = Endpoint<FormBody, RawBody>(.post, "/signature-profile/sign-out", success: 303, access: .anyone)
        public static let all: [any EndpointDeclaration] = [page, requestCode, signIn, save, photoUpload, photo, delete, signOut]
    }
}
