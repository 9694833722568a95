import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform

/// Passkeys (docs/security.md, "Passkeys"): WebAuthn credentials of an account, checked by
/// `WebAuthnRelyingParty` (the relying party id and origins from configuration). Adding or removing
/// one needs a step-up (`SecondFactors.stepUp`: the current password and, when any second factor
/// is on, one of them); each ceremony's challenge is random, stored hashed, single-use and
/// short-lived; a login needs the user verified (biometrics or the device's PIN), so a passkey
/// login counts as two factors. A sign counter that does not grow is reported as a suspected clone
/// (audit trail and a notice to the owner) and refused.
package struct Passkeys: Sendable {
    package let database: DatabaseProvider
    package let clock: GatehouseClock
    package let settings: GatehouseConfiguration.Passkeys
    /// The relying party: its id (`GATEHOUSE_PASSKEY_RP_ID`) and the origins a ceremony may come from.
    package let relyingParty: WebAuthnRelyingParty
    /// How long a passkey added can be undone from the notice (the second factors' setting).
    package let recoveryUndoesWithin: TimeInterval
    package let accounts: AccountStore
    package let secrets: Secrets
    package let rateLimiter: RateLimiter
    package let sessions: SessionService
    package let outbox: Outbox
    package let audit: AuditLog
    package let notices: SecurityNotices
    package let binding: ClientBinding
    /// The ceremonies' challenges and the assertions' checks, which second factors use too.
    package let assertions: PasskeyAssertions
    /// The step-up that adding or removing a passkey needs.
    package let secondFactors: SecondFactors
    private var store: PasskeyStore { PasskeyStore(database: database) }

    package init(database: DatabaseProvider, clock: GatehouseClock, settings: GatehouseConfiguration.Passkeys, relyingParty: WebAuthnRelyingParty,
                 recoveryUndoesWithin: TimeInterval, accounts: AccountStore, secrets: Secrets, rateLimiter: RateLimiter, sessions: SessionService,
                 outbox: Outbox, audit: AuditLog, notices: SecurityNotices, binding: ClientBinding, assertions: PasskeyAssertions,
                 secondFactors: SecondFactors) {
        self.database = database
        self.clock = clock
        self.settings = settings
        self.relyingParty = relyingParty
        self.recoveryUndoesWithin = recoveryUndoesWithin
        self.accounts = accounts
        self.secrets = secrets
        self.rateLimiter = rateLimiter
        self.sessions = sessions
        self.outbox = outbox
        self.audit = audit
        self.notices = notices
        self.binding = binding
        self.assertions = assertions
        self.secondFactors = secondFactors
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
        /// Whether the passkey can be synced between devices (its `amr`: `swk`, else `hwk`).
        package var synced: Bool

        package var method: AuthMethod { synced ? .swk : .hwk }
    }

    // MARK: Adding and removing

    /// The options for `navigator.credentials.create()`, after a step-up (spent here: the
    /// registration challenge is what it bought).
    package func creationOptions(accountID: UUID, stepUp: SecondFactors.StepUp, origin: RequestOrigin) async throws -> PasskeyCreationOptions {
        let account = try await accounts.accountRow(id: accountID)
        let existing = try await store.credentialIDs(of: accountID)
        guard existing.count < settings.perAccount else { throw Self.tooMany(settings.perAccount) }
        let proof = try await secondFactors.stepUp(account, stepUp, origin: origin)
        if let proof {
            try await database.db.withTransaction { tx in
                guard try await secondFactors.spend(proof, accountID: accountID, on: tx) else { throw SecondFactors.wrongCode(proof) }
            }
        }
        let challenge = try await assertions.issueChallenge(purpose: "register", accountID: accountID, loginChallengeID: nil)
        let name = account.email ?? account.username.map { "@" + $0 } ?? account.phone ?? accountID.uuidString.lowercased()
        let displayName = [account.firstName, account.lastName].compactMap { $0 }.joined(separator: " ")
        return PasskeyCreationOptions(
            rp: PasskeyRelyingParty(id: relyingParty.id, name: settings.rpName),
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
        let challenge = try await assertions.takeChallenge(clientData, purpose: "register", accountID: accountID)
        let made: WebAuthnRelyingParty.Credential
        do {
            made = try relyingParty.verifyRegistration(clientDataJSON: clientData, attestationObject: attestation, challenge: challenge,
                                                       requireUserVerification: true)
        } catch let error as WebAuthnError {
            throw Self.invalid(error.description)
        }
        let account = try await accounts.accountRow(id: accountID)
        let now = clock.now()
        let id = UUID()
        let name = String((registration.name?.trimmingCharacters(in: .whitespacesAndNewlines)).flatMap { $0.isEmpty ? nil : $0 }?.prefix(64) ?? "Passkey")
        let notice = notices.securityNotice(.passkeyAdded, [name, String(Int(recoveryUndoesWithin / 86_400))], to: account)
        do {
            try await database.db.withTransaction { tx in
                guard try await store.count(of: accountID, on: tx) < settings.perAccount else { throw Self.tooMany(settings.perAccount) }
                try await store.insert(PasskeyStore.New(id: id, accountID: accountID, credentialID: Base64URL.encode(made.id),
                                                        publicKey: Base64URL.encode(made.publicKey.cbor.encoded()), signCount: Int64(made.signCount),
                                                        backupEligible: made.backupEligible, name: name, createdAt: now), on: tx)
                try await audit.record(AuditEvent(.secondFactorAdded, by: .account(accountID), account: accountID, origin: origin.audit,
                                                        detail: ["factor": "passkey", "name": name]), on: tx)
                if let notice { try await outbox.enqueue(notice, on: tx) }
            }
        } catch where error.isConstraintViolation {
            throw Self.invalid("this passkey is registered already")
        }
        if notice != nil { outbox.signal.wake() }
        return Passkey(id: id, name: name, createdAt: now, lastUsedAt: nil, synced: made.backupEligible)
    }

    /// My passkeys, newest first.
    package func list(accountID: UUID) async throws -> [Passkey] {
        try await store.list(of: accountID)
    }

    /// Removes one of my passkeys after a step-up (another account's id is 404); the owner is told.
    package func remove(accountID: UUID, id: UUID, stepUp: SecondFactors.StepUp, origin: RequestOrigin) async throws {
        let account = try await accounts.accountRow(id: accountID)
        let proof = try await secondFactors.stepUp(account, stepUp, origin: origin)
        let removed = try await database.db.withTransaction { tx -> String? in
            if let proof, try await !secondFactors.spend(proof, accountID: accountID, on: tx) { throw SecondFactors.wrongCode(proof) }
            guard let name = try await store.remove(id, of: accountID, on: tx) else { return nil }
            try await audit.record(AuditEvent(.secondFactorRemoved, by: .account(accountID), account: accountID, origin: origin.audit,
                                                    detail: ["factor": "passkey", "name": name]), on: tx)
            if let notice = notices.securityNotice(.passkeyRemoved, [name], to: account) { try await outbox.enqueue(notice, on: tx) }
            return name
        }
        guard removed != nil else { throw GatehouseError.notFound(.passkeyNotFound, "error.passkeyNotFound") }
        outbox.signal.wake()
    }

    // MARK: Logging in

    /// The options for `navigator.credentials.get()`: any of this site's passkeys (no login
    /// challenge), or, for the second step of `loginChallenge`, that account's.
    /// Each writes a challenge: one client address may ask `GATEHOUSE_PASSKEY_OPTIONS_PER_IP` times per 5 minutes.
    package func requestOptions(for loginChallenge: SecondFactors.PendingLogin?, origin: RequestOrigin) async throws -> PasskeyRequestOptions {
        try await rateLimiter.hit("passkey-options-ip", key: origin.ip ?? "unknown", limit: settings.optionsPerIP, window: 300)
        var allowed: [String] = []
        if let loginChallenge {
            allowed = try await store.credentialIDs(of: loginChallenge.accountID)
            guard !allowed.isEmpty else { throw GatehouseError.notFound(.passkeyNotFound, "error.passkeyNotFound") }
        }
        let challenge = try await assertions.issueChallenge(purpose: loginChallenge == nil ? "login" : "second factor", accountID: loginChallenge?.accountID,
                                                 loginChallengeID: loginChallenge?.id)
        return PasskeyRequestOptions(challenge: challenge, timeout: Int(settings.challengeTTL * 1000), rpId: relyingParty.id,
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
        try await rateLimiter.hit("passkey-options-ip", key: origin.ip ?? "unknown", limit: settings.optionsPerIP, window: 300)
        let allowed = try await store.credentialIDs(of: accountID)
        guard !allowed.isEmpty else { throw GatehouseError.notFound(.passkeyNotFound, "error.passkeyNotFound") }
        let challenge = try await assertions.issueChallenge(purpose: Ceremony.stepUp(accountID).purpose, accountID: accountID, loginChallengeID: nil)
        return PasskeyRequestOptions(challenge: challenge, timeout: Int(settings.challengeTTL * 1000), rpId: relyingParty.id,
                                     allowCredentials: allowed.map { PasskeyDescriptor(id: $0) })
    }

    /// A login without a password: the assertion of a discoverable passkey, the user verified.
    package func login(_ assertion: PasskeyAssertion, origin: RequestOrigin) async throws -> IssuedSession {
        let verified = try await assertions.verify(assertion, for: .login, origin: origin)
        guard let account = try await accounts.row(id: verified.accountID), account.erasedAt == nil, account.deletionRequestedAt == nil else {
            // Deleting stops every way in but a password login (which takes the account back).
            throw Self.invalid("this passkey's account is being deleted: log in with the password to keep it")
        }
        return try await database.db.withTransaction { tx in
            guard try await assertions.spend(verified, on: tx) else { throw Self.invalid("the sign counter moved meanwhile: try again") }
            try await audit.record(AuditEvent(.loginSucceeded, by: .account(verified.accountID), account: verified.accountID, origin: origin.audit,
                                                    detail: ["with": "passkey", "name": verified.name]), on: tx)
            try await binding.bindClientRecord(account, origin: origin.audit, on: tx)
            return try await sessions.create(accountID: verified.accountID, methods: [verified.method], device: origin.device, ip: origin.ip,
                                             secondFactorChecked: true, on: tx)
        }
    }

    package func hasPasskeys(_ accountID: UUID) async throws -> Bool {
        try await store.hasAny(accountID)
    }

    /// The account's handle for authenticators: opaque, stable, never the email (HMAC of its id).
    private func userHandle(_ accountID: UUID) -> String {
        secrets.mac(accountID.uuidString.lowercased(), purpose: "passkey user handle")
    }

    package static func invalid(_ why: String) -> GatehouseError {
        GatehouseError(.invalidInput, .passkeyInvalid, LocalizedText("error.passkeyInvalid", [why]), field: "credential")
    }

    private static func tooMany(_ limit: Int) -> GatehouseError {
        GatehouseError(.unprocessable, .tooManyPasskeys, LocalizedText("error.tooManyPasskeys", [String(limit)]))
    }
}
