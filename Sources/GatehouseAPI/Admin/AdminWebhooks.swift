import Foundation

/// Webhooks (docs/webhooks.md): the business's endpoints hear account events, signed on the Standard Webhooks format,
/// with an admin key of scope `webhooks:write`.
extension AdminAPI {
    /// `GET /admin/v1/webhooks`: list webhook endpoints. Scope `webhooks:write`. Every endpoint, enabled or disabled,
    /// oldest first; never a secret.
    public static let writeWebhooks = "webhooks:write"

    /// `GET /admin/v1/webhooks`: list webhook endpoints. Scope `webhooks:write`. Every endpoint, enabled or disabled,
    /// oldest first; never a secret.
    public static let webhooks = Endpoint<NoContent, AdminWebhookList>(.get, "/admin/v1/webhooks", access: .adminKey(scope: writeWebhooks))
        .operation("adminListWebhooks", "List webhook endpoints", tags: "Admin webhooks")
        .errors([401: [.unauthorized], 403: [.insufficientScope]])
        .shared(.unexpectedProblem)
    /// `POST /admin/v1/webhooks`: add a webhook endpoint. Scope `webhooks:write`. An endpoint: `url` is `https` (plain
    /// `http` only where `GATEHOUSE_WEBHOOK_ALLOW_HTTP`) whose host resolves only to public addresses, with no user
    /// name or password; `eventTypes` among `account.created`, `account.updated`, `account.locked`, `account.unlocked`,
    /// `account.deletion_requested`, `account.deletion_cancelled`, `account.erased`, `second_factor.added`,
    /// `second_factor.removed`, `session.created`, `wallet.topup.succeeded` (none: every type but `session.created`,
    /// which is frequent and sent only when named). Its signing secret (`whsec_…`) is in this answer only. Audited as
    /// `webhook_endpoint.created`.
    public static let createWebhook = Endpoint<AdminWebhookCreation, AdminWebhookSecret>(.post, "/admin/v1/webhooks", success: 201, access: .adminKey(scope: writeWebhooks))
        .operation("adminCreateWebhook", "Add a webhook endpoint", tags: "Admin webhooks")
        .errors([400: [.missingParameter, .invalidParameter, .malformedBody], 401: [.unauthorized], 403: [.insufficientScope]])
        .shared(.unexpectedProblem)
    /// `DELETE /admin/v1/webhooks/{id}`: disable a webhook endpoint. Scope `webhooks:write`. Disables the endpoint for
    /// good: nothing more is queued for it, and what is queued fails as undeliverable. Audited as
    /// `webhook_endpoint.disabled`.
    public static let disableWebhook = Endpoint<NoContent, NoContent>(.delete, "/admin/v1/webhooks/{id}", success: 204, access: .adminKey(scope: writeWebhooks))
        .operation("adminDisableWebhook", "Disable a webhook endpoint", tags: "Admin webhooks")
        .errors([401: [.unauthorized], 403: [.insufficientScope], 404: [.webhookNotFound]])
        .shared(.unexpectedProblem)
        .uuid(notFound: .webhookNotFound)
    /// `POST /admin/v1/webhooks/{id}/rotate-secret`: give a webhook endpoint a new secret. Scope `webhooks:write`. A
    /// new signing secret, in this answer only; the one it replaces keeps signing beside it for
    /// `GATEHOUSE_WEBHOOK_SECRET_OVERLAP_SECONDS`, so the receiver can move over without losing a delivery. Audited as
    /// `webhook_endpoint.secret_rotated`.
    public static let rotateWebhookSecret = Endpoint<NoContent, AdminWebhookSecret>(
        .post, "/admin/v1/webhooks/{id}/rotate-secret", access: .adminKey(scope: writeWebhooks))
        .operation("adminRotateWebhookSecret", "Give a webhook endpoint a new secret", tags: "Admin webhooks")
        .errors([401: [.unauthorized], 403: [.insufficientScope], 404: [.webhookNotFound]])
        .shared(.unexpectedProblem)
        .uuid(notFound: .webhookNotFound)
    /// `GET /admin/v1/webhooks/{id}/deliveries`: a webhook endpoint's deliveries. Scope `webhooks:write`. The
    /// endpoint's newest deliveries (at most 100; `limit` fewer), by state: `pending` (waiting, or being retried:
    /// `nextAttemptAt`), `sent`, `failed` (given up on after the retry schedule: retry it by hand). Never the payload.
    public static let webhookDeliveries = Endpoint<AdminDeliveryQuery, AdminWebhookDeliveryList>(
        .get, "/admin/v1/webhooks/{id}/deliveries", access: .adminKey(scope: writeWebhooks))
        .operation("adminListWebhookDeliveries", "A webhook endpoint's deliveries", tags: "Admin webhooks")
        .errors([400: [.invalidParameter], 401: [.unauthorized], 403: [.insufficientScope], 404: [.webhookNotFound]])
        .shared(.unexpectedProblem)
        .uuid(notFound: .webhookNotFound)
    /// `POST /admin/v1/webhooks/deliveries/{id}/retry`: send a delivery given up on again. Scope `webhooks:write`.
    /// Sends a delivery that was given up on again, from its first attempt, with the same `webhook-id`. Audited as
    /// `outbox.retried`.
    public static let retryWebhookDelivery = Endpoint<NoContent, NoContent>(
        .post, "/admin/v1/webhooks/deliveries/{id}/retry", success: 204, access: .adminKey(scope: writeWebhooks))
        .operation("adminRetryWebhookDelivery", "Send a delivery given up on again", tags: "Admin webhooks")
        .errors([401: [.unauthorized], 403: [.insufficientScope], 404: [.deliveryNotFound]])
        .shared(.unexpectedProblem)
        .uuid(notFound: .deliveryNotFound)

    /// Every operation of the admin API over webhooks.
    public static let webhookOperations: [any EndpointDeclaration] = [
        webhooks, createWebhook, disableWebhook, rotateWebhookSecret, webhookDeliveries, retryWebhookDelivery,
    ]
}

/// `POST /admin/v1/webhooks`.
public struct AdminWebhookCreation: Codable, Sendable, Equatable {
    /// `https` (plain `http` in development only), at a public address.
    public var url: String
    public var description: String?
    /// The event types it hears (`account.created`, `account.updated`, `account.locked`, `account.unlocked`,
    /// `account.deletion_requested`, `account.deletion_cancelled`, `account.erased`, `second_factor.added`,
    /// `second_factor.removed`, `session.created`, `wallet.topup.succeeded`); absent or empty: all but `session.created`, which is frequent and
    /// heard only when named.
    public var eventTypes: [String]?

    /// Makes one of its members, each as its property describes.
    public init(url: String, description: String? = nil, eventTypes: [String]? = nil) {
        self.url = url
        self.description = description
        self.eventTypes = eventTypes
    }
}

/// An endpoint as listed: never its secret.
public struct AdminWebhookEndpoint: Codable, Sendable, Equatable {
    /// Its id.
    public var id: UUID
    /// Its address.
    public var url: String
    public var description: String?
    /// Empty: every type.
    public var eventTypes: [String]
    /// When it was made.
    public var createdAt: Date
    /// When deliveries to it stopped (after failing for too long, or turned off); nil while it is on.
    public var disabledAt: Date?

    /// Makes one of its members, each as its property describes.
    public init(id: UUID, url: String, description: String?, eventTypes: [String], createdAt: Date, disabledAt: Date?) {
        self.id = id
        self.url = url
        self.description = description
        self.eventTypes = eventTypes
        self.createdAt = createdAt
        self.disabledAt = disabledAt
    }
}

/// The business's webhook endpoints.
public struct AdminWebhookList: Codable, Sendable, Equatable {
    /// This page's items, in the list's order.
    public var items: [AdminWebhookEndpoint]
    /// Makes one of its members, each as its property describes.
    public init(items: [AdminWebhookEndpoint]) { self.items = items }
}

/// An endpoint with its signing secret (`whsec_…`), shown this once.
public struct AdminWebhookSecret: Codable, Sendable, Equatable {
    /// The endpoint.
    public var endpoint: AdminWebhookEndpoint
    /// The signing secret (`whsec_…`), shown once: keep it to check each delivery's signature.
    public var secret: String
    /// Makes one of its members, each as its property describes.
    public init(endpoint: AdminWebhookEndpoint, secret: String) {
        self.endpoint = endpoint
        self.secret = secret
    }
}

/// A delivery's state: waiting or being retried, delivered, or given up on (retry it by hand).
public enum AdminDeliveryState: String, Codable, Sendable, CaseIterable {
    /// Waiting to be sent (or sent again); delivered; given up after the last try.
    case pending, sent, failed
}

/// `GET /admin/v1/webhooks/{id}/deliveries`: newest first.
public struct AdminDeliveryQuery: EndpointQuery, Equatable {
    /// Only deliveries in this state.
    public var state: AdminDeliveryState?
    /// How many items a page holds at most.
    public var limit: Int?
    /// Makes one of its members, each as its property describes.
    public init(state: AdminDeliveryState? = nil, limit: Int? = nil) {
        self.state = state
        self.limit = limit
    }
    /// Every parameter the operation reads, in the order the document lists them.
    public static let parameters: [QueryParameter] = [.choice("state", AdminDeliveryState.self), .limit]
    /// Reads it from a request's query; a value against its parameter's rule throws ``QueryError``.
    public init(from query: QueryValues) throws { self.init(state: try query.choice("state", as: AdminDeliveryState.self), limit: try query.limit()) }
    /// The query's values to send, by name; absent parameters are left out.
    public var values: [String: String] {
        var values: [String: String] = [:]
        values.put("state", state)
        values.put("limit", limit)
        return values
    }
}

/// One event sent (or to be sent) to one endpoint.
public struct AdminWebhookDelivery: Codable, Sendable, Equatable {
    /// Its `webhook-id` is `msg_` and this.
    public var id: UUID
    /// Its kind.
    public var type: String
    /// Where it stands.
    public var state: AdminDeliveryState
    /// How many times it was tried.
    public var attempts: Int
    /// When it was made.
    public var createdAt: Date
    /// When it is tried next; nil once delivered or given up.
    public var nextAttemptAt: Date?
    /// When the endpoint answered 2xx; nil until then.
    public var deliveredAt: Date?
    /// The last attempt's failure (the endpoint's status and the start of its answer, or why it was not reached).
    public var lastError: String?

    /// Makes one of its members, each as its property describes.
    public init(id: UUID, type: String, state: AdminDeliveryState, attempts: Int, createdAt: Date, nextAttemptAt: Date?, deliveredAt: Date?,
                lastError: String?) {
        self.id = id
        self.type = type
        self.state = state
        self.attempts = attempts
        self.createdAt = createdAt
        self.nextAttemptAt = nextAttemptAt
        self.deliveredAt = deliveredAt
        self.lastError = lastError
    }
}

/// A page of deliveries, newest first.
public struct AdminWebhookDeliveryList: Codable, Sendable, Equatable {
    /// This page's items, in the list's order.
    public var items: [AdminWebhookDelivery]
    /// Makes one of its members, each as its property describes.
    public init(items: [AdminWebhookDelivery]) { self.items = items }
}
