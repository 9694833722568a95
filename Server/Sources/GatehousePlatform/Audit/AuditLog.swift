import FluentKit
import Foundation
import GatehouseFoundation
import SQLKit

/// What happened, in the audit trail (docs/operators.md, "The audit trail"): everything that
/// touches an account's security or money. Names are `area.event`, stable: exports and filters
/// use them.
package enum AuditKind: String, Sendable, CaseIterable, Codable {
    case accountCreated = "account.created"
    case loginSucceeded = "login.succeeded"
    /// Failed logins, counted: one row per account (or none, for an unknown one), client address
    /// and window, whose `count` grows (`AuditLog.countFailure`), so a guessing attack is a few
    /// rows, not one per guess.
    case loginFailed = "login.failed"
    case recoveryRequested = "recovery.requested"
    case passwordChanged = "password.changed"
    case emailChanged = "email.changed"
    case phoneChanged = "phone.changed"
    case sessionRevoked = "session.revoked"
    case sessionsRevoked = "sessions.revoked"
    case accountDeletionRequested = "account.deletion_requested"
    /// A password login within the grace period took the account back.
    case accountDeletionCancelled = "account.deletion_cancelled"
    /// Signatures enrolled for Sign To Login: a new way to sign in.
    case signatureEnrolled = "signature.enrolled"
    case walletCredited = "wallet.credited"
    /// The person changed their Sign To Login profile (the fields named), or deleted it with their signatures.
    case signatureProfileChanged = "signature.profile_changed"
    case signatureErased = "signature.erased"
    case appCreated = "app.created"
    case appKeyRotated = "app.key_rotated"
    case appDisabled = "app.disabled"
    case appEnabled = "app.enabled"
    case clientsImported = "clients.imported"
    /// A client record bound to the account whose verified phone it carries.
    case clientBound = "client.bound"
    /// A client record written or deleted one at a time (the admin API), or unbound by an operator.
    case clientSaved = "client.saved"
    /// A client record read through the admin API; an import previewed (a dry run).
    case clientRead = "client.read"
    case clientsPreviewed = "clients.previewed"
    case clientDeleted = "client.deleted"
    case clientUnbound = "client.unbound"
    /// An operator locked or unlocked the account.
    case accountLocked = "account.locked"
    case accountUnlocked = "account.unlocked"
    /// A second factor (the authenticator app) turned on or off, by the person or an operator.
    case secondFactorAdded = "second_factor.added"
    case secondFactorRemoved = "second_factor.removed"
    /// Wrong second-factor codes, counted as failed logins are.
    case secondFactorFailed = "second_factor.failed"
    /// A recovery code stood in for the authenticator app.
    case recoveryCodeUsed = "second_factor.recovery_code_used"
    case recoveryCodesRenewed = "second_factor.recovery_codes_renewed"
    /// A passkey's sign counter did not grow: two copies of its key exist; the login was refused.
    case passkeyCloneSuspected = "passkey.clone_suspected"
    /// An operator had the confirmation link sent again.
    case confirmationResent = "confirmation.resent"
    /// A wallet movement reversed by an operator.
    case walletReversed = "wallet.reversed"
    /// A top-up refunded at the payment provider, moved back out of the wallet.
    case walletRefunded = "wallet.refunded"
    /// A refund the provider made that the ledger could not follow (the wallet no longer holds the
    /// money, or it is more than was paid): an operator settles it.
    case walletRefundNotApplied = "wallet.refund_not_applied"
    /// A payment provider's notification not believed (signature, time) or not matching a top-up.
    case paymentNotificationRefused = "payment.notification_refused"
    /// A dead message of the outbox queued again by an operator.
    case outboxRetried = "outbox.retried"
    /// Operators and admin keys: made, disabled, signed in (failures counted as logins are).
    case operatorCreated = "operator.created"
    case operatorDisabled = "operator.disabled"
    case operatorSignedIn = "operator.signed_in"
    case operatorSignInFailed = "operator.sign_in_failed"
    case adminKeyCreated = "admin_key.created"
    case adminKeyDisabled = "admin_key.disabled"
    /// A key that signs the tokens other services verify was made (`gatehouse keys rotate`, the schedule, the first).
    case signingKeyMade = "signing_key.made"
    /// A refresh token already exchanged was exchanged again after the reuse interval: its session was ended.
    case refreshTokenReused = "refresh_token.reused"
    /// OpenID Connect clients (docs/oidc.md): registered, disabled, given a new secret.
    case oidcClientCreated = "oidc_client.created"
    case oidcClientDisabled = "oidc_client.disabled"
    case oidcClientSecretRotated = "oidc_client.secret_rotated"
    /// A person let a third-party client have their sign-in and the scopes named.
    case oidcConsentGranted = "oidc.consent_granted"
    /// An authorization code exchanged again: the session its first exchange opened was ended.
    case authorizationCodeReused = "authorization_code.reused"
    /// The admin API read an account, or listed accounts (the filters in `detail`).
    case accountRead = "account.read"
    case accountsListed = "accounts.listed"
    /// The admin API changed an account's profile or verified flags (the changed members' names in `detail`).
    case accountUpdated = "account.updated"
    /// An account's grace period ended and its personal data was erased.
    case accountErased = "account.erased"
    /// A webhook endpoint was added, disabled, or given a new secret (docs/webhooks.md).
    case webhookEndpointCreated = "webhook_endpoint.created"
    case webhookEndpointDisabled = "webhook_endpoint.disabled"
    case webhookSecretRotated = "webhook_endpoint.secret_rotated"
    /// An identity provider's sign-in (Apple, Google) joined to the account, or removed from it (docs/social-login.md).
    case identityLinked = "identity.linked"
    case identityUnlinked = "identity.unlinked"
    /// An identity token refused (its reason in `detail`), counted as failed logins are.
    case identitySignInRefused = "identity.sign_in_refused"

    /// The kinds a person sees of their own account (`GET /v1/me/events`): their sign-ins and
    /// the changes to how they sign in.
    package static let ownSecurity: [AuditKind] = [
        .accountCreated, .loginSucceeded, .loginFailed, .recoveryRequested, .passwordChanged, .emailChanged, .phoneChanged,
        .sessionRevoked, .sessionsRevoked, .accountDeletionRequested, .accountDeletionCancelled, .signatureEnrolled, .accountLocked, .accountUnlocked, .signatureErased,
        .secondFactorAdded, .secondFactorRemoved, .secondFactorFailed, .recoveryCodeUsed, .recoveryCodesRenewed, .passkeyCloneSuspected, .refreshTokenReused,
        .oidcConsentGranted, .authorizationCodeReused, .accountUpdated, .identityLinked, .identityUnlinked,
    ]
}

/// Who did it.
package enum AuditActor: Sendable, Equatable {
    /// The account's owner (or whoever held its session or credentials).
    case account(UUID)
    /// An operator, by their name.
    case `operator`(String)
    /// A business system through an admin key, by the key's id.
    case adminKey(String)
    /// The server itself, or a command run on it (`--as` names the person, when given).
    case system(String?)
    /// Nobody known: a failed login of an unknown account.
    case anonymous

    package var type: String {
        switch self {
        case .account: "account"
        case .operator: "operator"
        case .adminKey: "admin_key"
        case .system: "system"
        case .anonymous: "anonymous"
        }
    }

    package var id: String? {
        switch self {
        case .account(let id): id.uuidString.lowercased()
        case .operator(let name): name
        case .adminKey(let id): id
        case .system(let name): name
        case .anonymous: nil
        }
    }
}

/// Where a request came from, as the trail keeps it.
package struct AuditOrigin: Sendable, Equatable {
    package var ip: String?
    package var device: String?
    package var requestID: String?

    package init(ip: String? = nil, device: String? = nil, requestID: String? = nil) {
        self.ip = ip
        self.device = device
        self.requestID = requestID
    }
}

/// One event to keep. `detail` holds what an operator needs to read it (amounts, reasons, an
/// app's id, a masked address): never a secret, a code, a token, a password or a full address
/// that the event is about changing away from.
package struct AuditEvent: Sendable {
    package var kind: AuditKind
    package var actor: AuditActor
    package var account: UUID?
    package var origin: AuditOrigin
    package var detail: [String: String]

    package init(_ kind: AuditKind, by actor: AuditActor, account: UUID?, origin: AuditOrigin = AuditOrigin(), detail: [String: String] = [:]) {
        self.kind = kind
        self.actor = actor
        self.account = account
        self.origin = origin
        self.detail = detail
    }
}

/// An event as kept.
package struct AuditRecord: Sendable, Equatable, Codable {
    package var id: UUID
    package var at: Date
    package var kind: String
    package var actorType: String
    package var actorID: String?
    package var account: UUID?
    package var ip: String?
    package var device: String?
    package var requestID: String?
    package var detail: [String: String]
    /// How many times it happened: 1, or the failed logins a counted row holds.
    package var count: Int
}

/// The append-only audit trail. An event is written in the transaction of the change it
/// records (`record(_:on:)`), so a change is never kept without its event nor an event without
/// its change. Rows are never updated, but for a counted row's `count`, and go only when older
/// than the retention (`purgeExpired`).
package struct AuditLog: Sendable {
    package let database: DatabaseProvider
    package let clock: GatehouseClock
    package let retention: TimeInterval
    /// The window failed logins are counted in (one row per account, address and window).
    package let failureWindow: TimeInterval

    /// `retention` and `failureWindow` matter only to `purgeExpired` and `countFailure`: a
    /// service that only records may leave them.
    package init(database: DatabaseProvider, clock: GatehouseClock, retention: TimeInterval = 365 * 86_400, failureWindow: TimeInterval = 3_600) {
        self.database = database
        self.clock = clock
        self.retention = retention
        self.failureWindow = max(1, failureWindow)
    }

    /// Keeps `event`, in the caller's transaction when given; an event the business's systems hear about
    /// (`WebhookEvent`) goes to each of their endpoints' outbox in the same transaction.
    package func record(_ event: AuditEvent, on db: (any GatehouseDatabase)? = nil) async throws {
        try await record([event], on: db)
    }

    /// Events recorded together (an import's batch, or one): their rows in one statement and their webhooks with one
    /// read of the endpoints, in the caller's transaction when given.
    package func record(_ events: [AuditEvent], on db: (any GatehouseDatabase)? = nil) async throws {
        guard !events.isEmpty else { return }
        let db = db ?? database.db
        let now = clock.now()
        let rows = try events.map { event -> SQLQueryString in
            let values = try Self.values(event)
            return """
                (\(bind: OrderedID.make()), \(bind: now), \(bind: event.kind.rawValue), \(bind: event.actor.type), \(bind: event.actor.id),
                 \(bind: event.account), \(bind: values.ip), \(bind: values.device), \(bind: values.requestID), \(bind: values.detail), 1)
                """
        }
        try await db.raw("""
            INSERT INTO audit_events (id, at, kind, actor_type, actor_id, account_id, ip, device, request_id, detail, count)
            VALUES \(rows.joined(separator: ", "))
            """).run()
        try await WebhookOutboxStore(database: database).enqueue(events.compactMap { WebhookEvent($0, at: now) }, on: db)
    }

    /// Counts one failed login of `account` (nil: an identifier that names nobody) from the
    /// event's address: the window's row for both gets one more. `apart`: failures of another
    /// kind of the same event (a refused notification's reason) count in a row of their own.
    package func countFailure(_ event: AuditEvent, apart: String? = nil) async throws {
        let now = clock.now().timeIntervalSince1970
        let window = Int64((now / failureWindow).rounded(.down))
        var bucket = "\(event.kind.rawValue):\(event.account?.uuidString.lowercased() ?? event.actor.id ?? "-"):\(event.origin.ip ?? "-"):\(window)"
        if let apart { bucket += ":" + apart.prefix(40) }
        try await insert(event, bucket: bucket)
    }

    /// A counted failure: the row of its bucket (its kind, account or actor, address and window) gets one more.
    private func insert(_ event: AuditEvent, bucket: String) async throws {
        let (detail, ip, device, requestID) = try Self.values(event)
        try await database.db.raw("""
            INSERT INTO audit_events (id, at, kind, actor_type, actor_id, account_id, ip, device, request_id, detail, count, bucket)
            VALUES (\(bind: OrderedID.make()), \(bind: clock.now()), \(bind: event.kind.rawValue), \(bind: event.actor.type), \(bind: event.actor.id),
                    \(bind: event.account), \(bind: ip), \(bind: device), \(bind: requestID), \(bind: detail), 1, \(bind: bucket))
            ON CONFLICT (bucket) DO UPDATE SET count = audit_events.count + 1
            """).run()
    }

    /// An event's columns as kept: its detail as JSON, its origin cut to the columns' lengths.
    private static func values(_ event: AuditEvent) throws -> (detail: String, ip: String?, device: String?, requestID: String?) {
        (String(decoding: try encoder.encode(event.detail), as: UTF8.self), event.origin.ip.map { String($0.prefix(64)) },
         event.origin.device.map { String($0.prefix(200)) }, event.origin.requestID.map { String($0.prefix(64)) })
    }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    /// What to read: every filter optional; newest first, `limit` at a time, after the cursor's event.
    package struct Query: Sendable {
        package var account: UUID?
        package var actorType: String?
        package var actorID: String?
        package var kinds: [AuditKind] = []
        package var since: Date?
        package var until: Date?
        /// Read from the oldest on (an export) instead of the newest.
        package var oldestFirst = false
        package var after: UUID?
        package var limit = 100

        package init(account: UUID? = nil, kinds: [AuditKind] = [], since: Date? = nil, until: Date? = nil) {
            self.account = account
            self.kinds = kinds
            self.since = since
            self.until = until
        }
    }

    /// The events a query names, in its order. Ids are time-ordered (`OrderedID`), so the id is
    /// the order and the cursor.
    package func events(_ q: Query) async throws -> [AuditRecord] {
        var conditions: [SQLQueryString] = []
        if let account = q.account { conditions.append("account_id = \(bind: account)") }
        if let type = q.actorType { conditions.append("actor_type = \(bind: type)") }
        if let id = q.actorID { conditions.append("actor_id = \(bind: id)") }
        if !q.kinds.isEmpty {
            conditions.append("kind IN (\(q.kinds.map { "\(bind: $0.rawValue)" as SQLQueryString }.joined(separator: ", ")))")
        }
        if let since = q.since { conditions.append("at >= \(bind: since)") }
        if let until = q.until { conditions.append("at < \(bind: until)") }
        if let after = q.after { conditions.append(q.oldestFirst ? "id > \(bind: after)" : "id < \(bind: after)") }
        let filter: SQLQueryString = conditions.isEmpty ? "" : "WHERE \(conditions.joined(separator: " AND "))"
        let order: SQLQueryString = q.oldestFirst ? "ORDER BY id" : "ORDER BY id DESC"
        return try await database.sql.raw("""
            SELECT id, at, kind, actor_type, actor_id, account_id, ip, device, request_id, detail, count FROM audit_events
            \(filter) \(order) LIMIT \(literal: max(1, min(q.limit, 10_000)))
            """).all().map { row in
            let detail = try row.decode(column: "detail", as: String.self)
            return AuditRecord(
                id: try row.decode(column: "id", as: UUID.self), at: try row.decode(column: "at", as: Date.self),
                kind: try row.decode(column: "kind", as: String.self), actorType: try row.decode(column: "actor_type", as: String.self),
                actorID: try row.decode(column: "actor_id", as: String?.self), account: try row.decode(column: "account_id", as: UUID?.self),
                ip: try row.decode(column: "ip", as: String?.self), device: try row.decode(column: "device", as: String?.self),
                requestID: try row.decode(column: "request_id", as: String?.self),
                detail: (try? JSONDecoder().decode([String: String].self, from: Data(detail.utf8))) ?? [:],
                count: try row.decode(column: "count", as: Int.self))
        }
    }

    /// Forgets events older than the retention.
    package func purgeExpired() async throws {
        try await database.sql.raw("DELETE FROM audit_events WHERE at < \(bind: clock.now().addingTimeInterval(-retention))").run()
    }
}

/// The audit trail's table.
package struct M019CreateAuditEvents: SQLMigration {
    package var name: String { "019_CreateAuditEvents" }

    package func prepare(on database: any GatehouseDatabase) async throws {
        try await database.schema("audit_events")
            .field("id", .uuid, .identifier(auto: false))
            .field("at", .datetime, .required)
            .field("kind", .string, .required)
            .field("actor_type", .string, .required)
            .field("actor_id", .string)
            .field("account_id", .uuid)
            .field("ip", .string)
            .field("device", .string)
            .field("request_id", .string)
            .field("detail", .string, .required)
            .field("count", .int64, .required)
            // Counted rows' key (failed logins per account, address and window); NULL for the others.
            .field("bucket", .string)
            .unique(on: "bucket", name: "uq_audit_events_bucket")
            .create()
        try await database.create(index: "ix_audit_events_account").on("audit_events").column("account_id").column("id").run()
        try await database.create(index: "ix_audit_events_actor").on("audit_events").column("actor_id").column("id").run()
        try await database.create(index: "ix_audit_events_at").on("audit_events").column("at").run()
    }

    package func revert(on database: any GatehouseDatabase) async throws {
        try await database.schema("audit_events").delete()
    }

    package init() {}
}
