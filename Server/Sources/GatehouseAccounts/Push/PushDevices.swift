import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import SQLKit

/// A device that receives an account's pushes, as the server keeps it.
package struct PushDeviceRecord: Sendable, Equatable {
    package var id: UUID
    package var accountID: UUID
    package var sessionID: UUID
    package var platform: PushPlatform
    package var token: String
    package var bundleID: String?
    package var environment: APNsEnvironment?
    package var language: String?
    package var createdAt: Date
}

/// Push devices (docs/push.md): a token the OS gave an app, registered for the session that sent
/// it. A session's devices go when it ends (a foreign key, on every way a session ends: logout,
/// revocation, a password change, expiry); a token is unique across accounts, so a phone passed
/// to another person moves its token with its new owner's registration.
package struct PushDevices: Sendable {
    package let database: DatabaseProvider
    package let clock: GatehouseClock
    package let maxPerAccount: Int

    package init(database: DatabaseProvider, clock: GatehouseClock, maxPerAccount: Int) {
        self.database = database
        self.clock = clock
        self.maxPerAccount = maxPerAccount
    }

    private static func invalid(_ field: String, _ text: String) -> GatehouseError {
        GatehouseError(.invalidInput, .invalidParameter, LocalizedText("error.plain", [text]), field: field)
    }

    /// Checks a registration: a token of the platform's shape (APNs: 64–200 hex digits; FCM: up to
    /// 4,096 printable characters), a bundle id for APNs, a known language.
    package static func check(_ input: DeviceRegistration) throws -> DeviceRegistration {
        var input = input
        input.token = input.token.trimmingCharacters(in: .whitespacesAndNewlines)
        switch input.platform {
        case .apns:
            input.token = input.token.lowercased()
            guard (64...200).contains(input.token.count), input.token.allSatisfy(\.isHexDigit) else {
                throw invalid("token", "An APNs device token is 64 to 200 hexadecimal digits.")
            }
            guard let bundle = input.bundleId?.trimmingCharacters(in: .whitespaces), !bundle.isEmpty, bundle.count <= 155,
                  bundle.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") }) else {
                throw invalid("bundleId", "An APNs device needs the app's bundle id (its apns-topic).")
            }
            input.bundleId = bundle
            input.environment = input.environment ?? .production
        case .fcm:
            guard (1...4_096).contains(input.token.count), input.token.allSatisfy({ $0.isASCII && !$0.isWhitespace && !$0.isNewline }) else {
                throw invalid("token", "An FCM registration token is 1 to 4,096 printable characters.")
            }
            input.bundleId = nil
            input.environment = nil
        }
        if let language = input.language?.lowercased().prefix(2) {
            guard language == "en" || language == "ru" else { throw invalid("language", "The language is en or ru.") }
            input.language = String(language)
        }
        return input
    }

    /// Registers a token for a session, replacing the device that session registered on the same
    /// platform; the token leaves any other account. Refused (`too_many_devices`) past the limit.
    package func register(_ raw: DeviceRegistration, accountID: UUID, sessionID: UUID, on db: (any GatehouseDatabase)? = nil) async throws -> PushDeviceRecord {
        let input = try Self.check(raw)
        let now = clock.now()
        let write: @Sendable (any GatehouseDatabase) async throws -> PushDeviceRecord = { tx in
            try await tx.raw("DELETE FROM push_devices WHERE token = \(bind: input.token) OR (session_id = \(bind: sessionID) AND platform = \(bind: input.platform.rawValue))").run()
            let count = try await tx.raw("SELECT COUNT(*) AS n FROM push_devices WHERE account_id = \(bind: accountID)").first(decodingColumn: "n", as: Int.self) ?? 0
            guard count < maxPerAccount else {
                throw GatehouseError(.unprocessable, .tooManyDevices,
                                     LocalizedText("error.plain", ["An account may have \(maxPerAccount) push devices: remove one first."]))
            }
            let record = PushDeviceRecord(id: OrderedID.make(), accountID: accountID, sessionID: sessionID, platform: input.platform, token: input.token,
                                          bundleID: input.bundleId, environment: input.environment, language: input.language, createdAt: now)
            try await tx.raw("""
                INSERT INTO push_devices (id, account_id, session_id, platform, token, bundle_id, environment, language, created_at)
                VALUES (\(bind: record.id), \(bind: accountID), \(bind: sessionID), \(bind: input.platform.rawValue), \(bind: input.token),
                        \(bind: input.bundleId), \(bind: input.environment?.rawValue), \(bind: input.language), \(bind: now))
                """).run()
            return record
        }
        if let db { return try await write(db) }
        do {
            return try await database.db.withTransaction { try await write($0) }
        } catch where error.isConstraintViolation {
            // The same token registered at the same moment by another request: ours comes second.
            return try await database.db.withTransaction { try await write($0) }
        }
    }

    /// Removes the session's devices of a platform (the `/api` spec's `fcm` cleared).
    package func remove(sessionID: UUID, platform: PushPlatform, on db: (any GatehouseDatabase)? = nil) async throws {
        try await (db ?? database.db).raw("""
            DELETE FROM push_devices WHERE session_id = \(bind: sessionID) AND platform = \(bind: platform.rawValue)
            """).run()
    }

    package func list(accountID: UUID) async throws -> [PushDeviceRecord] {
        try await database.sql.raw("SELECT * FROM push_devices WHERE account_id = \(bind: accountID) ORDER BY created_at, id").all().map(Self.record)
    }

    /// Whether the account in `account` (a column of the statement it is part of) has a device.
    package static func exist(for account: SQLQueryString) -> SQLQueryString {
        "EXISTS (SELECT 1 FROM push_devices pd WHERE pd.account_id = \(account))"
    }

    /// The devices of these accounts, in the caller's transaction (what a push is written for).
    package func devices(of accounts: [UUID], on db: any GatehouseDatabase) async throws -> [PushDeviceRecord] {
        guard !accounts.isEmpty else { return [] }
        let list = SQLList(accounts.map { SQLBind($0) })
        return try await db.raw("SELECT * FROM push_devices WHERE account_id IN (\(list)) ORDER BY created_at, id")
            .all().map(Self.record)
    }

    /// Removes one of the account's devices; false when it has no such device.
    package func remove(_ id: UUID, accountID: UUID) async throws -> Bool {
        try await !database.sql.raw("DELETE FROM push_devices WHERE id = \(bind: id) AND account_id = \(bind: accountID) RETURNING id").all().isEmpty
    }

    /// Removes a device its push service said is gone (APNs 410, FCM `UNREGISTERED`), if it still
    /// has that token.
    package func removeUnregistered(_ id: UUID, token: String) async throws {
        try await database.sql.raw("DELETE FROM push_devices WHERE id = \(bind: id) AND token = \(bind: token)").run()
    }

    // MARK: Settings

    /// Whether pushes show a message's sender and text (the default) or only "New message".
    package func previews(accountID: UUID) async throws -> Bool {
        try await database.sql.raw("SELECT previews FROM push_settings WHERE account_id = \(bind: accountID)")
            .first(decodingColumn: "previews", as: Bool.self) ?? true
    }

    /// Those of `accounts` who turned message previews off.
    package func previewsOff(_ accounts: [UUID], on db: any GatehouseDatabase) async throws -> Set<UUID> {
        Set(try await db.raw("""
            SELECT account_id FROM push_settings WHERE account_id IN (\(SQLList(accounts.map { SQLBind($0) }))) AND previews = \(bind: false)
            """).all().map { try $0.decode(column: "account_id", as: UUID.self) })
    }

    package func setPreviews(_ previews: Bool, accountID: UUID) async throws {
        try await database.sql.raw("""
            INSERT INTO push_settings (account_id, previews, updated_at) VALUES (\(bind: accountID), \(bind: previews), \(bind: clock.now()))
            ON CONFLICT (account_id) DO UPDATE SET previews = excluded.previews, updated_at = excluded.updated_at
            """).run()
    }

    static func record(_ row: any SQLRow) throws -> PushDeviceRecord {
        PushDeviceRecord(
            id: try row.decode(column: "id", as: UUID.self), accountID: try row.decode(column: "account_id", as: UUID.self),
            sessionID: try row.decode(column: "session_id", as: UUID.self),
            platform: PushPlatform(rawValue: try row.decode(column: "platform", as: String.self)) ?? .fcm,
            token: try row.decode(column: "token", as: String.self), bundleID: try row.decode(column: "bundle_id", as: String?.self),
            environment: try row.decode(column: "environment", as: String?.self).flatMap(APNsEnvironment.init(rawValue:)),
            language: try row.decode(column: "language", as: String?.self), createdAt: try row.decode(column: "created_at", as: Date.self))
    }
}

/// Push devices (migration 023): one row per token, tied to the session that registered it.
package struct M023CreatePushDevices: SQLMigration {
    package var name: String { "023_CreatePushDevices" }

    package func prepare(on database: any GatehouseDatabase) async throws {
        try await database.schema("push_devices")
            .field("id", .uuid, .identifier(auto: false))
            .field("account_id", .uuid, .required, .references("accounts", "id", onDelete: .cascade))
            .field("session_id", .uuid, .required, .references("sessions", "id", onDelete: .cascade))
            .field("platform", .string, .required)
            .field("token", .string, .required)
            .field("bundle_id", .string)
            .field("environment", .string)
            .field("language", .string)
            .field("created_at", .datetime, .required)
            .unique(on: "token", name: "uq_push_devices_token")
            .create()
        try await database.create(index: "ix_push_devices_account").on("push_devices").column("account_id").run()
        try await database.create(index: "ix_push_devices_session").on("push_devices").column("session_id").run()
        // A person's push settings: whether a message's text is shown (`previews`).
        try await database.schema("push_settings")
            .field("account_id", .uuid, .identifier(auto: false), .references("accounts", "id", onDelete: .cascade))
            .field("previews", .bool, .required)
            .field("updated_at", .datetime, .required)
            .create()
        // A push waiting for its coalescing window is replaced in place by a newer one with its key.
        try await database.schema("outbox_messages").field("coalesce_key", .string).update()
        try await database.create(index: "ix_outbox_coalesce").on("outbox_messages").column("coalesce_key").run()
    }

    package func revert(on database: any GatehouseDatabase) async throws {
        try await database.drop(index: "ix_outbox_coalesce").run()
        try await database.schema("outbox_messages").deleteField("coalesce_key").update()
        try await database.schema("push_settings").delete()
        try await database.schema("push_devices").delete()
    }

    package init() {}
}
