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
    package let rules: AccountRules
    private var settings: GatehouseConfiguration.Passkeys { rules.configuration.passkeys }
    private var store: PasskeyStore { PasskeyStore(database: rules.database) }
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
        let existing = try await store.credentialIDs(of: accountID)
        guard existing.count < settings.perAccount else { throw Self.tooMany(settings.perAccount) }
        let factors = SecondFactors(rules: rules)
        let proof = try await factors.stepUp(account, stepUp, origin: origin)
        if let proof {
            try await rules.database.db.withTransaction { tx in
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
            try await rules.database.db.withTransaction { tx in
                guard try await store.count(of: accountID, on: tx) < settings.perAccount else { throw Self.tooMany(settings.perAccount) }
                try await store.insert(PasskeyStore.New(id: id, accountID: accountID, credentialID: Base64URL.encode(made.id),
                                                        publicKey: Base64URL.encode(made.publicKey.cbor.encoded()), signCount: Int64(made.signCount),
                                                        backupEligible: made.backupEligible, name: name, createdAt: now), on: tx)
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
        try await store.list(of: accountID)
    }

    /// Removes one of my passkeys after a step-up (another account's id is 404); the owner is told.
    package func remove(accountID: UUID, id: UUID, stepUp: SecondFactors.StepUp, origin: RequestOrigin) async throws {
        let account = try await rules.accountRow(id: accountID)
        let factors = SecondFactors(rules: rules)
        let proof = try await factors.stepUp(account, stepUp, origin: origin)
        let removed = try await rules.database.db.withTransaction { tx -> String? in
            if let proof, try await !factors.spend(proof, accountID: accountID, on: tx) { throw SecondFactors.wrongCode(proof) }
            guard let name = try await store.remove(id, of: accountID, on: tx) else { return nil }
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
            allowed = try await store.credentialIDs(of: loginChallenge.accountID)
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
        let allowed = try await store.credentialIDs(of: accountID)
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
        guard let passkey = try await store.find(credentialID: Base64URL.encode(rawID)) else { throw Self.invalid("this passkey is not registered here") }
        let (passkeyID, accountID, stored, name) = (passkey.id, passkey.accountID, passkey.signCount, passkey.name)
        if let owner = ceremony.accountID, owner != accountID { throw Self.invalid("this passkey is another account's") }
        guard let keyBytes = Base64URL.decode(passkey.publicKey) else { throw Self.invalid("stored key unreadable") }
        let credential = WebAuthnRelyingParty.Credential(id: rawID, publicKey: try COSEKey(encoded: keyBytes), signCount: UInt32(clamping: stored),
                                                        aaguid: [], backupEligible: false, userVerified: true)
        do {
            let count = try relyingParty.verifyAssertion(credential: credential, clientDataJSON: clientData, authenticatorData: authenticatorData,
                                                         signature: signature, challenge: challenge, requireUserVerification: true)
            return Verified(passkeyID: passkeyID, accountID: accountID, name: name, storedCount: stored, newCount: Int64(count), loginChallengeID: pending?.id)
        } catch let error as WebAuthnError {
            if case .counterDidNotIncrease(let was, let got) = error {
                let account = try await rules.accountRow(id: accountID)
                try await rules.database.db.withTransaction { tx in
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
    package func spend(_ verified: Verified, on tx: any GatehouseDatabase) async throws -> Bool {
        try await store.advanceCounter(of: verified.passkeyID, from: verified.storedCount, to: verified.newCount, at: rules.clock.now(), on: tx)
    }

    /// A login without a password: the assertion of a discoverable passkey, the user verified.
    package func login(_ assertion: PasskeyAssertion, origin: RequestOrigin) async throws -> IssuedSession {
        let verified = try await verify(assertion, for: .login, origin: origin)
        guard let account = try await rules.store.row(id: verified.accountID), account.erasedAt == nil, account.deletionRequestedAt == nil else {
            // Deleting stops every way in but a password login (which takes the account back).
            throw Self.invalid("this passkey's account is being deleted: log in with the password to keep it")
        }
        return try await rules.database.db.withTransaction { tx in
            guard try await spend(verified, on: tx) else { throw Self.invalid("the sign counter moved meanwhile: try again") }
            try await rules.audit.record(AuditEvent(.loginSucceeded, by: .account(verified.accountID), account: verified.accountID, origin: origin.audit,
                                                    detail: ["with": "passkey", "name": verified.name]), on: tx)
            try await rules.bindClientRecord(account, origin: origin.audit, on: tx)
            return try await rules.sessions.create(accountID: verified.accountID, device: origin.device, ip: origin.ip, secondFactorChecked: true, on: tx)
        }
    }

    package func hasPasskeys(_ accountID: UUID) async throws -> Bool {
        try await store.hasAny(accountID)
    }

    // MARK: Challenges

    /// A random challenge, kept as its hash with what it is for.
    private func issueChallenge(purpose: String, accountID: UUID?, loginChallengeID: UUID?) async throws -> String {
        var generator = SystemRandomNumberGenerator()
        let challenge = Base64URL.encode((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let now = rules.clock.now()
        try await store.addChallenge(Secrets.sha256Hex(challenge), purpose: purpose, accountID: accountID, loginChallengeID: loginChallengeID,
                                     at: now, expiresAt: now.addingTimeInterval(settings.challengeTTL))
        return challenge
    }

    /// Spends the challenge the client data carries, before anything is checked: issued for
    /// `purpose` (and this account, and this login), live, unused.
    private func takeChallenge(_ clientData: [UInt8], purpose: String, accountID: UUID?, loginChallengeID: UUID? = nil) async throws -> [UInt8] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(clientData)) as? [String: Any],
              let text = object["challenge"] as? String, text.utf8.count <= 200, let bytes = Base64URL.decode(text) else {
            throw Self.invalid("clientDataJSON carries no challenge")
        }
        let taken = try await store.takeChallenge(Secrets.sha256Hex(text), purpose: purpose, accountID: accountID, loginChallengeID: loginChallengeID,
                                                  at: rules.clock.now())
        guard taken else { throw Self.invalid("the challenge is not one this server issued for this, or it was used or expired") }
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
