import FluentKit
import Foundation
import GatehouseFoundation
import GatehousePlatform

/// An operator's role: what they may do in the console (docs/operators.md, "Roles").
package enum OperatorRole: String, Sendable, CaseIterable, Codable {
    /// Everything, money and imports included.
    case admin
    /// Helps people: sessions, locks, confirmation and recovery messages, client bindings, the outbox.
    case support
    /// Sees everything, changes nothing.
    case readOnly = "read-only"

    package func may(_ action: OperatorAction) -> Bool {
        switch self {
        case .admin: true
        case .support: !action.needsAdmin
        case .readOnly: action == .view
        }
    }
}

/// What an operator does in the console; each change needs a reason and is in the audit trail.
package enum OperatorAction: String, Sendable, CaseIterable {
    case view
    case revokeSessions = "revoke-sessions"
    case lock, unlock
    case resendConfirmation = "resend-confirmation"
    case sendRecoveryCode = "send-recovery-code"
    case unbindClient = "unbind-client"
    /// Turns the authenticator app off and removes every passkey (`SecondFactors.removeAll`).
    case removeSecondFactors = "remove-second-factors"
    case retryMessage = "retry-message"
    case credit, reverse
    case importClients = "import-clients"

    /// Money and the business's records: admins only.
    var needsAdmin: Bool { self == .credit || self == .reverse || self == .importClients }
}

/// An operator as the console and the commands see them (never their password or TOTP secret).
package struct OperatorRecord: Sendable, Equatable, Codable {
    package var id: UUID
    package var name: String
    package var role: OperatorRole
    package var disabledAt: Date?
    package var createdAt: Date
}

/// A live console session.
package struct OperatorSession: Sendable, Equatable {
    package var id: UUID
    package var who: OperatorRecord
    package var expiresAt: Date
    /// The token every form of this session carries (derived from the session's token: another
    /// site can neither read nor make it).
    package var csrf: String
}

/// Operators: their own accounts, apart from the people's (a `/v1` session is never an
/// operator's, nor the other way round), with a role and a TOTP second factor (RFC 6238), signing
/// in to the console for short sessions (docs/operators.md, "The console").
package struct Operators: Sendable {
    package let database: DatabaseProvider
    private var store: OperatorStore { OperatorStore(database: database) }
    package let clock: GatehouseClock
    package let hasher: PasswordHasher
    package let secrets: Secrets
    package let rateLimiter: RateLimiter
    package let settings: GatehouseConfiguration.Operators
    package let issuer: String

    package init(database: DatabaseProvider, clock: GatehouseClock, hasher: PasswordHasher, secrets: Secrets, rateLimiter: RateLimiter,
                 settings: GatehouseConfiguration.Operators, issuer: String = "Gatehouse") {
        self.database = database
        self.clock = clock
        self.hasher = hasher
        self.secrets = secrets
        self.rateLimiter = rateLimiter
        self.settings = settings
        self.issuer = issuer
    }

    private var audit: AuditLog { AuditLog(database: database, clock: clock) }
    private static let totpPurpose = "operator totp"
    package static let minimumPasswordLength = 12

    package static func refusal(_ text: String) -> GatehouseError {
        GatehouseError(.invalidInput, .invalidParameter, LocalizedText("error.plain", [text]))
    }

    /// A name operators sign in with: 1–64 letters, digits, `.`, `-`, `_`, `@`; kept lower-case.
    package static func normalize(name: String) -> String? {
        let name = name.trimmingCharacters(in: .whitespaces).lowercased()
        guard (1...64).contains(name.count), name.allSatisfy({ ($0.isASCII && ($0.isLetter || $0.isNumber)) || ".-_@".contains($0) }) else { return nil }
        return name
    }

    // MARK: Making and disabling

    /// A new operator. Their TOTP secret is returned this once, as the `otpauth://` URI an
    /// authenticator app scans and as base32 to type.
    package func create(name: String, role: OperatorRole, password: String, by actor: AuditActor) async throws -> (OperatorRecord, uri: String, secret: String) {
        guard let name = Self.normalize(name: name) else { throw Self.refusal("a name is 1–64 letters, digits, '.', '-', '_' or '@'") }
        guard password.count >= Self.minimumPasswordLength, password.utf8.count <= 1_024 else {
            throw Self.refusal("an operator's password has at least \(Self.minimumPasswordLength) characters")
        }
        let secret = TOTP.newSecret()
        let now = clock.now()
        let record = OperatorRecord(id: UUID(), name: name, role: role, disabledAt: nil, createdAt: now)
        let hash = try await hasher.hash(password)
        let sealed = try secrets.seal(secret, purpose: Self.totpPurpose)
        do {
            try await database.db.withTransaction { tx in
                try await store.insert(record, passwordHash: hash, sealedSecret: sealed, on: tx)
                try await audit.record(AuditEvent(.operatorCreated, by: actor, account: nil, detail: ["operator": name, "role": role.rawValue]), on: tx)
            }
        } catch where error.isConstraintViolation {
            throw Self.refusal("an operator named \(name) exists already")
        }
        return (record, TOTP(secret: secret).uri(issuer: issuer, account: name), Base32.encode(secret))
    }

    /// Disables an operator for good and ends their sessions; false when there is no such enabled one.
    package func disable(name: String, by actor: AuditActor) async throws -> Bool {
        guard let name = Self.normalize(name: name) else { return false }
        let now = clock.now()
        return try await database.db.withTransaction { tx in
            guard try await store.disable(name: name, at: now, on: tx) else { return false }
            try await audit.record(AuditEvent(.operatorDisabled, by: actor, account: nil, detail: ["operator": name]), on: tx)
            return true
        }
    }

    package func list() async throws -> [OperatorRecord] {
        try await store.all()
    }

    // MARK: Signing in

    /// Signs an operator in with their password and a current TOTP code; the session's token (in
    /// clear this once) and the session. Unknown name, wrong password, wrong or reused code and a
    /// disabled operator all look the same (`invalid_credentials`), cost the same bcrypt time and
    /// count against the same budgets: per name from this address, and per address. Never per name
    /// alone: anyone could then keep an operator out by failing for their name from elsewhere; a
    /// guesser spread over many addresses still needs the password and a current code.
    package func signIn(name typed: String, password: String, code: String, ip: String?, device: String?, requestID: String?) async throws -> (token: String, session: OperatorSession) {
        let name = Self.normalize(name: typed)
        let ipKey = ip ?? "unknown"
        let nameKey = (name ?? "invalid") + " from " + ipKey
        let window = settings.signInWindow
        try await rateLimiter.hit("operator-ip", key: ipKey, limit: settings.signInFailuresPerIP, window: window, messageKey: "error.loginThrottled")
        do {
            try await rateLimiter.hit("operator-name", key: nameKey, limit: settings.signInFailuresPerName, window: window, messageKey: "error.loginThrottled")
        } catch {
            try? await rateLimiter.release("operator-ip", key: ipKey, window: window)
            throw error
        }
        let found = try await name.asyncMap { name in try await store.credentials(name: name) } ?? nil
        let origin = AuditOrigin(ip: ip, device: device, requestID: requestID)
        let now = clock.now()
        // The password is checked first and always (a dummy hash for an unknown name), so an
        // unknown, a disabled and an enabled operator cost the same time.
        let passwordRight = try await hasher.verify(password, hash: found?.passwordHash ?? hasher.dummyHash) && found != nil
        guard passwordRight, let found, found.record.disabledAt == nil,
              let secret = try? secrets.open(found.sealedSecret, purpose: Self.totpPurpose),
              let step = TOTP(secret: secret).match(code, at: now, after: found.lastStep)
        else {
            let known = found?.record
            try await audit.countFailure(AuditEvent(.operatorSignInFailed, by: known.map { .operator($0.name) } ?? .anonymous, account: nil, origin: origin))
            throw GatehouseError.invalidCredentials
        }
        let record = found.record
        let token = secrets.token()
        let session = OperatorSession(id: UUID(), who: record, expiresAt: now.addingTimeInterval(settings.sessionMax),
                                      csrf: csrf(tokenHash: Secrets.sha256Hex(token)))
        let used = try await database.db.withTransaction { tx -> Bool in
            // The code is spent: a second sign-in with it (a shoulder-surfer's) fails.
            guard try await store.spendStep(step, of: record.id, on: tx) else { return false }
            try await store.openSession(session.id, of: record.id, tokenHash: Secrets.sha256Hex(token), at: now, expiresAt: session.expiresAt,
                                        ip: ip.map { String($0.prefix(64)) }, device: device.map { String($0.prefix(200)) }, on: tx)
            try await rateLimiter.release([("operator-ip", ipKey), ("operator-name", nameKey)], window: window, on: tx)
            try await audit.record(AuditEvent(.operatorSignedIn, by: .operator(record.name), account: nil, origin: origin,
                                              detail: ["role": record.role.rawValue]), on: tx)
            return true
        }
        guard used else {
            try await audit.countFailure(AuditEvent(.operatorSignInFailed, by: .operator(record.name), account: nil, origin: origin))
            throw GatehouseError.invalidCredentials
        }
        return (token, session)
    }

    /// The live session of a token: not ended, not past its absolute end, used within the idle
    /// limit (each use moves that on), of an operator still enabled.
    package func session(token: String) async throws -> OperatorSession? {
        guard !token.isEmpty, token.utf8.count <= 100 else { return nil }
        let tokenHash = Secrets.sha256Hex(token)
        let now = clock.now()
        guard let stored = try await store.session(tokenHash: tokenHash) else { return nil }
        guard stored.expiresAt > now, now.timeIntervalSince(stored.lastSeenAt) < settings.sessionIdle else {
            try await store.endSession(stored.id)
            return nil
        }
        if now.timeIntervalSince(stored.lastSeenAt) > 15 {
            try await store.touchSession(stored.id, at: now)
        }
        return OperatorSession(id: stored.id, who: stored.who, expiresAt: stored.expiresAt, csrf: csrf(tokenHash: tokenHash))
    }

    package func signOut(token: String) async throws {
        try await store.endSession(tokenHash: Secrets.sha256Hex(token))
    }

    package func purgeExpired() async throws {
        let now = clock.now()
        try await store.purgeSessions(endedBefore: now, idleBefore: now.addingTimeInterval(-settings.sessionIdle))
    }

    private func csrf(tokenHash: String) -> String {
        secrets.mac(tokenHash, purpose: "operator csrf")
    }
}

extension Optional {
    fileprivate func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}
