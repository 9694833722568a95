import Foundation

/// Webhooks (docs/webhooks.md): the business's endpoints hear account events, signed on the Standard Webhooks format,
/// with an admin key of scope `webhooks:write`.
extension AdminAPI {
    public static let writeWebhooks = "webhooks:write"

    public static let webhooks = Endpoint<NoContent, AdminWebhookList>(.get, "/admin/v1/webhooks", access: .adminKey(scope: writeWebhooks))
        .operation("adminListWebhooks", "List webhook endpoints", tags: "Admin webhooks")
        .errors([401: [.unauthorized], 403: [.insufficientScope]])
        .shared(.unexpectedProblem)
    public static let createWebhook = Endpoint<AdminWebhookCreation, AdminWebhookSecret>(.post, "/admin/v1/webhooks", success: 201, access: .adminKey(scope: writeWebhooks))
        .operation("adminCreateWebhook", "Add a webhook endpoint", tags: "Admin webhooks")
        .errors([400: [.missingParameter, .invalidParameter, .malformedBody], 401: [.unauthorized], 403: [.insufficientScope]])
        .shared(.unexpectedProblem)
    public static let disableWebhook = Endpoint<NoContent, NoContent>(.delete, "/admin/v1/webhooks/{id}", success: 204, access: .adminKey(scope: writeWebhooks))
        .operation("adminDisableWebhook", "Disable a webhook endpoint", tags: "Admin webhooks")
        .errors([401: [.unauthorized], 403: [.insufficientScope], 404: [.webhookNotFound]])
        .shared(.unexpectedProblem)
        .uuid(notFound: .webhookNotFound)
    public static let rotateWebhookSecret = Endpoint<NoContent, AdminWebhookSecret>(
        .post, "/admin/v1/webhooks/{id}/rotate-secret", access: .adminKey(scope: writeWebhooks))
        .operation("adminRotateWebhookSecret", "Give a webhook endpoint a new secret", tags: "Admin webhooks")
        .errors([401: [.unauthorized], 403: [.insufficientScope], 404: [.webhookNotFound]])
        .shared(.unexpectedProblem)
        .uuid(notFound: .webhookNotFound)
    public static let webhookDeliveries = Endpoint<AdminDeliveryQuery, AdminWebhookDeliveryList>(
        .get, "/admin/v1/webhooks/{id}/deliveries", access: .adminKey(scope: writeWebhooks))
        .operation("adminListWebhookDeliveries", "A webhook endpoint's deliveries", tags: "Admin webhooks")
        .errors([400: [.invalidParameter], 401: [.unauthorized], 403: [.insufficientScope], 404: [.webhookNotFound]])
        .shared(.unexpectedProblem)
        .uuid(notFound: .webhookNotFound)
    public static let retryWebhookDelivery = Endpoint<NoContent, NoContent>(
        .post, "/admin/v1/webhooks/deliveries/{id}/retry", success: 204, access: .adminKey(scope: writeWebhooks))
        .operation("adminRetryWebhookDelivery", "Send a delivery given up on again", tags: "Admin webhooks")
        .errors([401: [.unauthorized], 403: [.insufficientScope], 404: [.deliveryNotFound]])
        .shared(.unexpectedProblem)
        .uuid(notFound: .deliveryNotFound)

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

    public init(url: String, description: String? = nil, eventTypes: [String]? = nil) {
        self.url = url
        self.description = description
        self.eventTypes = eventTypes
    }
}

/// An endpoint as listed: never its secret.
public struct AdminWebhookEndpoint: Codable, Sendable, Equatable {
    public var id: UUID
    public var url: String
    public var description: String?
    /// Empty: every type.
    public var eventTypes: [String]
    public var createdAt: Date
    public var disabledAt: Date?

    public init(id: UUID, url: String, description: String?, eventTypes: [String], createdAt: Date, disabledAt: Date?) {
        self.id = id
        self.url = url
        self.description = description
        self.eventTypes = eventTypes
        self.createdAt = createdAt
        self.disabledAt = disabledAt
    }
}

public struct AdminWebhookList: Codable, Sendable, Equatable {
    public var items: [AdminWebhookEndpoint]
    public init(items: [AdminWebhookEndpoint]) { self.items = items }
}

/// An endpoint with its signing secret (`whsec_…`), shown this once.
public struct AdminWebhookSecret: Codable, Sendable, Equatable {
    public var endpoint: AdminWebhookEndpoint
    public var secret: String
    public init(endpoint: AdminWebhookEndpoint, secret: String) {
        self.endpoint = endpoint
        self.secret = secret
    }
}

/// A delivery's state: waiting or being retried, delivered, or given up on (retry it by hand).
public enum AdminDeliveryState: String, Codable, Sendable, CaseIterable {
    case pending, sent, failed
}

/// `GET /admin/v1/webhooks/{id}/deliveries`: newest first.
public struct AdminDeliveryQuery: EndpointQuery, Equatable {
    public var state: AdminDeliveryState?
    public var limit: Int?
    public init(state: AdminDeliveryState? = nil, limit: Int? = nil) {
        self.state = state
        self.limit = limit
    }
    public static let parameters: [QueryParameter] = [.choice("state", AdminDeliveryState.self), .limit]
    public init(from query: QueryValues) throws { self.init(state: try query.choice("state", as: AdminDeliveryState.self), limit: try query.limit()) }
    public var values: [String: String] {
        var values: [String: String] = [:]
        values.put("state", state)
        values.put("limit", limit)
        return values
    }
}

public struct AdminWebhookDelivery: Codable, Sendable, Equatable {
    /// Its `webhook-id` is `msg_` and this.
    public var id: UUID
    public var type: String
    public var state: AdminDeliveryState
    public var attempts: Int
    public var createdAt: Date
    public var nextAttemptAt: Date?
    public var deliveredAt: Date?
    /// The last attempt's failure (the endpoint's status and the start of its answer, or why it was not reached).
    public var lastError: String?

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

public struct AdminWebhookDeliveryList: Codable, Sendable, Equatable {
    public var items: [AdminWebhookDelivery]
    public init(items: [AdminWebhookDelivery]) { self.items = items }
}
