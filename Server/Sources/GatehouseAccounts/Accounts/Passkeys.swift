import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import SQLKit

/// Passkeys (docs/security.md, "Passkeys"): WebAuthn credentials of an account, checked by
/// `WebAuthnRelyingParty` (the relying party id and origins from configuration). Adding or removing
/// one needs a step-up (`SecondFactors.stepUp`: the current password and, when any second factor
/// is on, one of them); each ceremony's challenge is random, stored hashed, single-use and
/// short-lived; a login needs the user verified (biometrics or the device's PIN), so a passkey
/// login counts as two factors. A sign counter that does not grow is reported as a suspected clone
/// (audit trail and a notice to the owner) and refused.
package struct Passkeys: Sendable {
    package let rules: AccountRules
    private var settings: GatehouseConfiguration.Passkeys { rules.configuration.passkeys }
    private var sql: any SQLDatabase { rules.database.sql }
    private var relyingParty: WebAuthnRelyingParty {
        WebAuthnRelyingParty(id: rules.configuration.passkeyRPID, origins: rules.configuration.passkeyOrigins)
    }

    package init(rules: AccountRules) {
        self.rules = rules
    }

    /// What a checked assertion proved: the passkey, its counter before and after.
    package struct Verified: Sendable {
        package var passkeyID: UUID
        package var accountID: UUID
        package var name: String
        package var storedCount: Int64
        package var newCount: Int64
        /// The password login this assertion is the second step of, if any.
        package var loginChallengeID: UUID?
    }

    // MARK: Adding and removing

    /// The options for `navigator.credentials.create()`, after a step-up (spent here: the
    /// registration challenge is what it bought).
    package func creationOptions(accountID: UUID, stepUp: SecondFactors.StepUp, origin: RequestOrigin) async throws -> PasskeyCreationOptions {
        let account = try await rules.accountRow(id: accountID)
        let existing = try await credentialIDs(of: accountID)
        guard existing.count < settings.perAccount else { throw Self.tooMany(settings.perAccount) }
        let factors = SecondFactors(rules: rules)
        let proof = try await factors.stepUp(account, stepUp, origin: origin)
        if let proof {
            try await rules.database.db.transaction { tx in
                guard try await factors.spend(proof, accountID: accountID, on: tx) else { throw SecondFactors.wrongCode(proof) }
            }
        }
        let challenge = try await issueChallenge(purpose: "register", accountID: accountID, loginChallengeID: nil)
        let name = account.email ?? account.username.map { "@" + $0 } ?? account.phone ?? accountID.uuidString.lowercased()
        let displayName = [account.firstName, account.lastName].compactMap { $0 }.joined(separator: " ")
        return PasskeyCreationOptions(
            rp: PasskeyRelyingParty(id: rules.configuration.passkeyRPID, name: settings.rpName),
            user: PasskeyUser(id: userHandle(accountID), name: name, displayName: displayName.isEmpty ? name : displayName),
            challenge: challenge, pubKeyCredParams: [PasskeyAlgorithm(alg: -7), PasskeyAlgorithm(alg: -257)],
            timeout: Int(settings.challengeTTL * 1000), excludeCredentials: existing.map { PasskeyDescriptor(id: $0) },
            authenticatorSelection: PasskeyAuthenticatorSelection())
    }

    /// Keeps the credential the platform made with the options of `creationOptions`: the challenge
    /// is spent first, then the attestation checked; the owner is told.
    package func register(accountID: UUID, _ registration: PasskeyRegistration, origin: RequestOrigin) async throws -> Passkey {
        let credential = registration.credential
        guard let clientData = Base64URL.decode(credential.response.clientDataJSON),
              let attestation = Base64URL.decode(credential.response.attestationObject) else {
            throw Self.invalid("clientDataJSON and attestationObject must be base64url")
        }
        let challenge = try await takeChallenge(clientData, purpose: "register", accountID: accountID)
        let made: WebAuthnRelyingParty.Credential
        do {
            made = try relyingParty.verifyRegistration(clientDataJSON: clientData, attestationObject: attestation, challenge: challenge,
                                                       requireUserVerification: true)
        } catch let error as WebAuthnError {
            throw Self.invalid(error.description)
        }
        let account = try await rules.accountRow(id: accountID)
        let now = rules.clock.now()
        let id = UUID()
        let name = String((registration.name?.trimmingCharacters(in: .whitespacesAndNewlines)).flatMap { $0.isEmpty ? nil : $0 }?.prefix(64) ?? "Passkey")
        let notice = rules.securityNotice(.passkeyAdded, [name, String(Int(rules.configuration.secondFactors.recoveryUndoesWithin / 86_400))], to: account)
        do {
            try await rules.database.db.transaction { tx in
                let sql = tx as! any SQLDatabase
                let count = try await sql.raw("SELECT COUNT(*) AS n FROM passkeys WHERE account_id = \(bind: accountID)").first()?
                    .decode(column: "n", as: Int.self) ?? 0
                guard count < settings.perAccount else { throw Self.tooMany(settings.perAccount) }
                try await sql.raw("""
                    INSERT INTO passkeys (id, account_id, credential_id, public_key, sign_count, backup_eligible, name, created_at, last_used_at)
                    VALUES (\(bind: id), \(bind: accountID), \(bind: Base64URL.encode(made.id)), \(bind: Base64URL.encode(made.publicKey.cbor.encoded())),
                            \(bind: Int64(made.signCount)), \(bind: made.backupEligible), \(bind: name), \(bind: now), NULL)
                    """).run()
                try await rules.audit.record(AuditEvent(.secondFactorAdded, by: .account(accountID), account: accountID, origin: origin.audit,
                                                        detail: ["factor": "passkey", "name": name]), on: tx)
                if let notice { try await rules.outbox.enqueue(notice, on: tx) }
            }
        } catch where error.isConstraintViolation {
            throw Self.invalid("this passkey is registered already")
        }
        if notice != nil { rules.outbox.signal.wake() }
        return Passkey(id: id, name: name, createdAt: now, lastUsedAt: nil, synced: made.backupEligible)
    }

    /// My passkeys, newest first.
    package func list(accountID: UUID) async throws -> [Passkey] {
        try await sql.raw("""
            SELECT id, name, created_at, last_used_at, backup_eligible FROM passkeys WHERE account_id = \(bind: accountID) ORDER BY created_at DESC
            """).all().map { row in
            Passkey(id: try row.decode(column: "id", as: UUID.self), name: try row.decode(column: "name", as: String.self),
                    createdAt: try row.decode(column: "created_at", as: Date.self), lastUsedAt: try row.decode(column: "last_used_at", as: Date?.self),
                    synced: try row.decode(column: "backup_eligible", as: Bool.self))
        }
    }

    /// Removes one of my passkeys after a step-up (another account's id is 404); the owner is told.
    package func remove(accountID: UUID, id: UUID, stepUp: SecondFactors.StepUp, origin: RequestOrigin) async throws {
        let account = try await rules.accountRow(id: accountID)
        let factors = SecondFactors(rules: rules)
        let proof = try await factors.stepUp(account, stepUp, origin: origin)
        let removed = try await rules.database.db.transaction { tx -> String? in
            if let proof, try await !factors.spend(proof, accountID: accountID, on: tx) { throw SecondFactors.wrongCode(proof) }
            guard let row = try await (tx as! any SQLDatabase).raw("""
                DELETE FROM passkeys WHERE id = \(bind: id) AND account_id = \(bind: accountID) RETURNING name
                """).first() else { return nil }
            let name = try row.decode(column: "name", as: String.self)
            try await rules.audit.record(AuditEvent(.secondFactorRemoved, by: .account(accountID), account: accountID, origin: origin.audit,
                                                    detail: ["factor": "passkey", "name": name]), on: tx)
            if let notice = rules.securityNotice(.passkeyRemoved, [name], to: account) { try await rules.outbox.enqueue(notice, on: tx) }
            return name
        }
        guard removed != nil else { throw GatehouseError.notFound(.passkeyNotFound, "error.passkeyNotFound") }
        rules.outbox.signal.wake()
    }

    // MARK: Logging in

    /// The options for `navigator.credentials.get()`: any of this site's passkeys (no login
    /// challenge), or, for the second step of `loginChallenge`, that account's.
    /// Each writes a challenge: one client address may ask `GATEHOUSE_PASSKEY_OPTIONS_PER_IP` times per 5 minutes.
    package func requestOptions(for loginChallenge: SecondFactors.PendingLogin?, origin: RequestOrigin) async throws -> PasskeyRequestOptions {
        try await rules.rateLimiter.hit("passkey-options-ip", key: origin.ip ?? "unknown", limit: settings.optionsPerIP, window: 300)
        var allowed: [String] = []
        if let loginChallenge {
            allowed = try await credentialIDs(of: loginChallenge.accountID)
            guard !allowed.isEmpty else { throw GatehouseError.notFound(.passkeyNotFound, "error.passkeyNotFound") }
        }
        let challenge = try await issueChallenge(purpose: loginChallenge == nil ? "login" : "second factor", accountID: loginChallenge?.accountID,
                                                 loginChallengeID: loginChallenge?.id)
        return PasskeyRequestOptions(challenge: challenge, timeout: Int(settings.challengeTTL * 1000), rpId: rules.configuration.passkeyRPID,
                                     allowCredentials: allowed.map { PasskeyDescriptor(id: $0) })
    }

    /// What an assertion is for: a login without a password, the second step of a password login,
    /// or a step-up of a signed-in account (`SecondFactors.stepUp`).
    package enum Ceremony: Sendable {
        case login
        case secondStep(SecondFactors.PendingLogin)
        case stepUp(UUID)

        var purpose: String {
            switch self {
            case .login: "login"
            case .secondStep: "second factor"
            case .stepUp: "step up"
            }
        }

        /// The account the assertion must be of (nil: any).
        var accountID: UUID? {
            switch self {
            case .login: nil
            case .secondStep(let pending): pending.accountID
            case .stepUp(let id): id
            }
        }
    }

    /// The options for `navigator.credentials.get()` of a step-up: this account's passkeys
    /// (404 `passkey_not_found` when it has none). Counted as login options are.
    package func stepUpOptions(accountID: UUID, origin: RequestOrigin) async throws -> PasskeyRequestOptions {
        try await rules.rateLimiter.hit("passkey-options-ip", key: origin.ip ?? "unknown", limit: settings.optionsPerIP, window: 300)
        let allowed = try await credentialIDs(of: accountID)
        guard !allowed.isEmpty else { throw GatehouseError.notFound(.passkeyNotFound, "error.passkeyNotFound") }
        let challenge = try await issueChallenge(purpose: Ceremony.stepUp(accountID).purpose, accountID: accountID, loginChallengeID: nil)
        return PasskeyRequestOptions(challenge: challenge, timeout: Int(settings.challengeTTL * 1000), rpId: rules.configuration.passkeyRPID,
                                     allowCredentials: allowed.map { PasskeyDescriptor(id: $0) })
    }

    /// Checks an assertion: its challenge spent first (issued for that ceremony), the passkey known
    /// (and the account's, for a second step or a step-up), the user verified, the signature and the
    /// counter. A counter that did not grow is audited and told as a suspected clone, then refused.
    package func verify(_ assertion: PasskeyAssertion, for ceremony: Ceremony, origin: RequestOrigin) async throws -> Verified {
        var pending: SecondFactors.PendingLogin? = nil
        if case .secondStep(let login) = ceremony { pending = login }
        guard let clientData = Base64URL.decode(assertion.response.clientDataJSON),
              let authenticatorData = Base64URL.decode(assertion.response.authenticatorData),
              let signature = Base64URL.decode(assertion.response.signature),
              let rawID = Base64URL.decode(assertion.rawId.isEmpty ? assertion.id : assertion.rawId), !rawID.isEmpty else {
            throw Self.invalid("clientDataJSON, authenticatorData, signature and rawId must be base64url")
        }
        let challenge = try await takeChallenge(clientData, purpose: ceremony.purpose, accountID: ceremony.accountID, loginChallengeID: pending?.id)
        guard let row = try await sql.raw("""
            SELECT id, account_id, public_key, sign_count, name FROM passkeys WHERE credential_id = \(bind: Base64URL.encode(rawID))
            """).first() else { throw Self.invalid("this passkey is not registered here") }
        let passkeyID = try row.decode(column: "id", as: UUID.self)
        let accountID = try row.decode(column: "account_id", as: UUID.self)
        if let owner = ceremony.accountID, owner != accountID { throw Self.invalid("this passkey is another account's") }
        let stored = try row.decode(column: "sign_count", as: Int64.self)
        let name = try row.decode(column: "name", as: String.self)
        guard let keyBytes = Base64URL.decode(try row.decode(column: "public_key", as: String.self)) else { throw Self.invalid("stored key unreadable") }
        let credential = WebAuthnRelyingParty.Credential(id: rawID, publicKey: try COSEKey(encoded: keyBytes), signCount: UInt32(clamping: stored),
                                                        aaguid: [], backupEligible: false, userVerified: true)
        do {
            let count = try relyingParty.verifyAssertion(credential: credential, clientDataJSON: clientData, authenticatorData: authenticatorData,
                                                         signature: signature, challenge: challenge, requireUserVerification: true)
            return Verified(passkeyID: passkeyID, accountID: accountID, name: name, storedCount: stored, newCount: Int64(count), loginChallengeID: pending?.id)
        } catch let error as WebAuthnError {
            if case .counterDidNotIncrease(let was, let got) = error {
                let account = try await rules.accountRow(id: accountID)
                try await rules.database.db.transaction { tx in
                    try await rules.audit.record(AuditEvent(.passkeyCloneSuspected, by: .anonymous, account: accountID, origin: origin.audit,
                                                            detail: ["name": name, "stored": String(was), "received": String(got)]), on: tx)
                    if let notice = rules.securityNotice(.passkeyCloneSuspected, [name], to: account) { try await rules.outbox.enqueue(notice, on: tx) }
                }
                rules.outbox.signal.wake()
            }
            throw Self.invalid(error.description)
        }
    }

    /// Moves the counter on, in the transaction the assertion allows; false when another request
    /// with the same passkey moved it first.
    package func spend(_ verified: Verified, on tx: any Database) async throws -> Bool {
        try await !(tx as! any SQLDatabase).raw("""
            UPDATE passkeys SET sign_count = \(bind: verified.newCount), last_used_at = \(bind: rules.clock.now())
            WHERE id = \(bind: verified.passkeyID) AND sign_count = \(bind: verified.storedCount) RETURNING id
            """).all().isEmpty
    }

    /// A login without a password: the assertion of a discoverable passkey, the user verified.
    package func login(_ assertion: PasskeyAssertion, origin: RequestOrigin) async throws -> IssuedSession {
        let verified = try await verify(assertion, for: .login, origin: origin)
        guard let account = try await rules.store.row(id: verified.accountID), account.erasedAt == nil, account.deletionRequestedAt == nil else {
            // Deleting stops every way in but a password login (which takes the account back).
            throw Self.invalid("this passkey's account is being deleted: log in with the password to keep it")
        }
        return try await rules.database.db.transaction { tx in
            guard try await spend(verified, on: tx) else { throw Self.invalid("the sign counter moved meanwhile: try again") }
            try await rules.audit.record(AuditEvent(.loginSucceeded, by: .account(verified.accountID), account: verified.accountID, origin: origin.audit,
                                                    detail: ["with": "passkey", "name": verified.name]), on: tx)
            try await rules.bindClientRecord(account, origin: origin.audit, on: tx)
            return try await rules.sessions.create(accountID: verified.accountID, device: origin.device, ip: origin.ip, secondFactorChecked: true, on: tx)
        }
    }

    package func hasPasskeys(_ accountID: UUID) async throws -> Bool {
        try await sql.raw("SELECT id FROM passkeys WHERE account_id = \(bind: accountID) LIMIT 1").first() != nil
    }

    // MARK: Challenges

    private func credentialIDs(of accountID: UUID) async throws -> [String] {
        try await sql.raw("SELECT credential_id FROM passkeys WHERE account_id = \(bind: accountID) ORDER BY created_at").all()
            .map { try $0.decode(column: "credential_id", as: String.self) }
    }

    /// A random challenge, kept as its hash with what it is for.
    private func issueChallenge(purpose: String, accountID: UUID?, loginChallengeID: UUID?) async throws -> String {
        var generator = SystemRandomNumberGenerator()
        let challenge = Base64URL.encode((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let now = rules.clock.now()
        try await sql.raw("DELETE FROM webauthn_challenges WHERE expires_at < \(bind: now.addingTimeInterval(-60))").run()
        try await sql.raw("""
            INSERT INTO webauthn_challenges (id, challenge_hash, purpose, account_id, login_challenge_id, created_at, expires_at, used_at)
            VALUES (\(bind: UUID()), \(bind: Secrets.sha256Hex(challenge)), \(bind: purpose), \(bind: accountID), \(bind: loginChallengeID),
                    \(bind: now), \(bind: now.addingTimeInterval(settings.challengeTTL)), NULL)
            """).run()
        return challenge
    }

    /// Spends the challenge the client data carries, before anything is checked: issued for
    /// `purpose` (and this account, and this login), live, unused.
    private func takeChallenge(_ clientData: [UInt8], purpose: String, accountID: UUID?, loginChallengeID: UUID? = nil) async throws -> [UInt8] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(clientData)) as? [String: Any],
              let text = object["challenge"] as? String, text.utf8.count <= 200, let bytes = Base64URL.decode(text) else {
            throw Self.invalid("clientDataJSON carries no challenge")
        }
        let now = rules.clock.now()
        let accountCondition: SQLQueryString = accountID.map { "AND account_id = \(bind: $0)" } ?? "AND account_id IS NULL"
        let loginCondition: SQLQueryString = loginChallengeID.map { "AND login_challenge_id = \(bind: $0)" } ?? ""
        let taken = try await sql.raw("""
            UPDATE webauthn_challenges SET used_at = \(bind: now)
            WHERE challenge_hash = \(bind: Secrets.sha256Hex(text)) AND purpose = \(bind: purpose) AND used_at IS NULL AND expires_at > \(bind: now)
            \(accountCondition) \(loginCondition)
            RETURNING id
            """).all()
        guard !taken.isEmpty else { throw Self.invalid("the challenge is not one this server issued for this, or it was used or expired") }
        return bytes
    }

    /// The account's handle for authenticators: opaque, stable, never the email (HMAC of its id).
    private func userHandle(_ accountID: UUID) -> String {
        rules.secrets.mac(accountID.uuidString.lowercased(), purpose: "passkey user handle")
    }

    private static func invalid(_ why: String) -> GatehouseError {
        GatehouseError(.invalidInput, .passkeyInvalid, LocalizedText("error.passkeyInvalid", [why]), field: "credential")
    }

    private static func tooMany(_ limit: Int) -> GatehouseError {
        GatehouseError(.unprocessable, .tooManyPasskeys, LocalizedText("error.tooManyPasskeys", [String(limit)]))
    }
}

/// Passkeys and the challenges of their ceremonies.
package struct M026CreatePasskeys: AsyncMigration {
    package var name: String { "026_CreatePasskeys" }

    package func prepare(on database: any Database) async throws {
        try await database.schema("passkeys")
            .field("id", .uuid, .identifier(auto: false))
            .field("account_id", .uuid, .required, .references("accounts", "id", onDelete: .cascade))
            // Base64url, as the platform sends it.
            .field("credential_id", .string, .required)
            // The COSE key, base64url.
            .field("public_key", .string, .required)
            .field("sign_count", .int64, .required)
            .field("backup_eligible", .bool, .required)
            .field("name", .string, .required)
            .field("created_at", .datetime, .required)
            .field("last_used_at", .datetime)
            .unique(on: "credential_id", name: "uq_passkeys_credential")
            .create()
        try await database.schema("webauthn_challenges")
            .field("id", .uuid, .identifier(auto: false))
            .field("challenge_hash", .string, .required)
            // register, login, second factor
            .field("purpose", .string, .required)
            .field("account_id", .uuid, .references("accounts", "id", onDelete: .cascade))
            .field("login_challenge_id", .uuid)
            .field("created_at", .datetime, .required)
            .field("expires_at", .datetime, .required)
            .field("used_at", .datetime)
            .unique(on: "challenge_hash", name: "uq_webauthn_challenges_hash")
            .create()
        let sql = database as! any SQLDatabase
        try await sql.create(index: "ix_passkeys_account").on("passkeys").column("account_id").run()
        try await sql.create(index: "ix_webauthn_challenges_expires").on("webauthn_challenges").column("expires_at").run()
    }

    package func revert(on database: any Database) async throws {
        try await database.schema("webauthn_challenges").delete()
        try await database.schema("passkeys").delete()
    }

    package init() {}
}
