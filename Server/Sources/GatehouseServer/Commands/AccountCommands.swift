import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform

/// `gatehouse accounts …`: an operator finds an account and ends its sessions, straight on the
/// database (no server needed; the instances hear of ended sessions through the event bus).
/// Every change is in the audit trail as the system, on behalf of `--as`.
public enum AccountCommands {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// An account as an operator sees it.
    public struct Summary: Codable, Sendable {
        public struct Session: Codable, Sendable {
            public var id: UUID
            public var device: String?
            public var ip: String?
            public var createdAt: Date
            public var lastUsedAt: Date
        }
        /// A passkey of the account (a way in without a password).
        public struct PasskeyEntry: Codable, Sendable {
            public var id: UUID
            public var name: String
            public var createdAt: Date
            public var lastUsedAt: Date?
        }
        public struct Lock: Codable, Sendable {
            public var since: Date
            public var reason: String
        }
        public struct Client: Codable, Sendable {
            public var room: String?
            public var base: String?
            public var partnerZones: Int
        }
        public struct Event: Codable, Sendable {
            public var at: Date
            public var kind: String
            public var actor: String
            public var ip: String?
            public var count: Int
        }
        public var id: UUID
        public var login: String?
        public var email: String?
        public var emailConfirmed: Bool
        public var phone: String?
        public var phoneVerified: Bool
        public var name: String?
        public var createdAt: Date
        /// When it was locked and why, when it is.
        public var locked: Lock?
        /// The client record bound to it: its room, base and partner zones.
        public var client: Client?
        public var sessions: [Session]
        /// Since when the authenticator app is on (nil: off).
        public var authenticatorAppSince: Date?
        /// The passkeys, newest first.
        public var passkeys: [PasskeyEntry]
        /// The newest security events, newest first.
        public var events: [Event]
    }

    /// The account an operator names: its id, a confirmed email, a verified phone (any common
    /// format), a login or a tag (`@tag`).
    static func find(_ query: String, _ services: GatehouseServices) async throws -> AccountSnapshot {
        if let id = UUID(uuidString: query.trimmingCharacters(in: .whitespaces)), let account = try? await services.login.account(id: id) {
            return account
        }
        guard let row = try await services.login.findAccount(identifier: query), let id = row.id else {
            throw Failure(description: "no account is named by '\(query.prefix(100))' (an id, a confirmed email, a verified phone, a login or a tag)")
        }
        return try await services.login.account(id: id)
    }

    public static func show(configuration: GatehouseConfiguration, query: String, events: Int = 10) async throws -> Summary {
        try await OperatorCommands.withServices(configuration, failure: { Failure(description: $0) }) { services in
            let account = try await find(query, services)
            let sessions = try await services.sessions.list(accountID: account.id)
            let client = try await services.clients.record(of: account.id)
            var recent = AuditLog.Query(account: account.id)
            recent.limit = max(1, min(events, 1_000))
            let lock = try await services.locks.lock(of: account.id)
            let name = [account.firstName, account.middleName, account.lastName].compactMap { $0 }.joined(separator: " ")
            let factors = try await services.secondFactors.status(accountID: account.id)
            let passkeys = try await services.passkeys.list(accountID: account.id)
            return Summary(
                id: account.id, login: account.username, email: account.displayedEmail, emailConfirmed: account.isEmailConfirmed,
                phone: account.phone, phoneVerified: account.phoneVerifiedAt != nil, name: name.isEmpty ? nil : name, createdAt: account.createdAt,
                locked: lock.map { .init(since: $0.at, reason: $0.reason) },
                client: client.map { .init(room: $0.room, base: $0.base, partnerZones: $0.parts.count) },
                sessions: sessions.map { .init(id: $0.id, device: $0.device, ip: $0.ip, createdAt: $0.createdAt, lastUsedAt: $0.lastUsedAt) },
                authenticatorAppSince: factors.totpSince,
                passkeys: passkeys.map { .init(id: $0.id, name: $0.name, createdAt: $0.createdAt, lastUsedAt: $0.lastUsedAt) },
                events: try await services.audit.events(recent).map { .init(at: $0.at, kind: $0.kind, actor: [$0.actorType, $0.actorID].compactMap { $0 }.joined(separator: " "), ip: $0.ip, count: $0.count) })
        }
    }

    static func checkedReason(_ text: String) throws -> String {
        let reason = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !reason.isEmpty, reason.count <= 500 else { throw Failure(description: "--reason is required (at most 500 characters)") }
        return reason
    }

    /// Locks the account (its sessions end, no sign-in works) or unlocks it, with the reason in
    /// the audit trail; false when it was so already.
    public static func setLocked(_ locked: Bool, configuration: GatehouseConfiguration, query: String, reason: String, as person: String?) async throws -> Bool {
        let reason = try checkedReason(reason)
        return try await OperatorCommands.withServices(configuration, failure: { Failure(description: $0) }) { services in
            let account = try await find(query, services)
            let locks = services.locks
            let actor = AuditActor.system(person.map { String($0.prefix(100)) })
            return locked ? try await locks.lock(account.id, reason: reason, by: actor, origin: AuditOrigin())
                : try await locks.unlock(account.id, reason: reason, by: actor, origin: AuditOrigin())
        }
    }

    /// Turns the account's second factors off — the authenticator app and every passkey (the person
    /// lost their phone and their recovery codes, or a thief added one, and the person proved who
    /// they are another way), with the reason in the audit trail; the owner is told. False when
    /// none was on.
    public static func removeSecondFactor(configuration: GatehouseConfiguration, query: String, reason: String, as person: String?) async throws -> Bool {
        let reason = try checkedReason(reason)
        return try await OperatorCommands.withServices(configuration, failure: { Failure(description: $0) }) { services in
            let account = try await find(query, services)
            return try await services.secondFactors.removeAll(accountID: account.id, reason: reason,
                                                                                  by: .system(person.map { String($0.prefix(100)) }), origin: AuditOrigin())
        }
    }

    /// Ends every session of the account, with the reason in the audit trail; how many ended.
    public static func revokeSessions(configuration: GatehouseConfiguration, query: String, reason: String, as person: String?) async throws -> Int {
        let reason = try checkedReason(reason)
        return try await OperatorCommands.withServices(configuration, failure: { Failure(description: $0) }) { services in
            let account = try await find(query, services)
            return try await services.sessions.revokeAll(accountID: account.id, keeping: nil, by: .system(person.map { String($0.prefix(100)) }),
                                                         origin: AuditOrigin(), reason: reason)
        }
    }

    /// What an import did.
    public struct ImportSummary: Codable, Sendable {
        public var imported = 0
        /// Already here (by external id, email, phone or tag): left as they are.
        public var existing = 0
        /// Line number and reason of each row refused (the first hundred).
        public var refused: [String] = []
        public var refusedCount = 0
        public var dryRun = false
    }

    /// Imports the JSON lines of `path` (docs/migrating.md) through `AccountImport.Reader` (a file of any length in
    /// bounded memory); `progress` hears every thousand lines.
    package static func importAccounts(configuration: GatehouseConfiguration, path: String, dryRun: Bool, firebase: ForeignPasswordHash.FirebaseScrypt?,
                                      as person: String?, progress: @escaping @Sendable (Int) -> Void) async throws -> ImportSummary {
        guard let file = FileHandle(forReadingAtPath: path) else { throw Failure(description: "cannot read \(path)") }
        defer { try? file.close() }
        return try await OperatorCommands.withServices(configuration, failure: { Failure(description: $0) }) { services in
            var reader = AccountImport.Reader(services.accountImport, options: .init(dryRun: dryRun, firebase: firebase), by: .system(person), progress: progress)
            while let chunk = try file.read(upToCount: 65_536), !chunk.isEmpty { try await reader.feed(chunk) }
            let report = try await reader.finish()
            return ImportSummary(imported: report.imported, existing: report.existing, refused: report.refused.map { "line \($0.line): \($0.reason)" },
                                 refusedCount: report.refusedCount, dryRun: dryRun)
        }
    }
}
