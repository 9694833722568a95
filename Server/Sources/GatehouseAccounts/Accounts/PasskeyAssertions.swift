import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform

/// The passkey ceremonies' challenges and the checks of an assertion (docs/security.md,
/// "Passkeys"): what a passkey login, the second step of a password login and a step-up share.
/// `SecondFactors` checks a passkey through it, and `Passkeys` (which needs `SecondFactors` for
/// its step-ups) too, so neither holds the other both ways.
package struct PasskeyAssertions: Sendable {
    package let database: DatabaseProvider
    package let clock: GatehouseClock
    /// How long a ceremony's challenge lives.
    package let challengeTTL: TimeInterval
    package let relyingParty: WebAuthnRelyingParty
    package let accounts: AccountStore
    package let outbox: Outbox
    package let audit: AuditLog
    package let notices: SecurityNotices
    private var store: PasskeyStore { PasskeyStore(database: database) }

    package init(database: DatabaseProvider, clock: GatehouseClock, challengeTTL: TimeInterval, relyingParty: WebAuthnRelyingParty, accounts: AccountStore,
                 outbox: Outbox, audit: AuditLog, notices: SecurityNotices) {
        self.database = database
        self.clock = clock
        self.challengeTTL = challengeTTL
        self.relyingParty = relyingParty
        self.accounts = accounts
        self.outbox = outbox
        self.audit = audit
        self.notices = notices
    }

    /// Checks an assertion: its challenge spent first (issued for that ceremony), the passkey known
    /// (and the account's, for a second step or a step-up), the user verified, the signature and the
    /// counter. A counter that did not grow is audited and told as a suspected clone, then refused.
    package func verify(_ assertion: PasskeyAssertion, for ceremony: Passkeys.Ceremony, origin: RequestOrigin) async throws -> Passkeys.Verified {
        var pending: SecondFactors.PendingLogin? = nil
        if case .secondStep(let login) = ceremony { pending = login }
        guard let clientData = Base64URL.decode(assertion.response.clientDataJSON),
              let authenticatorData = Base64URL.decode(assertion.response.authenticatorData),
              let signature = Base64URL.decode(assertion.response.signature),
              let rawID = Base64URL.decode(assertion.rawId.isEmpty ? assertion.id : assertion.rawId), !rawID.isEmpty else {
            throw Passkeys.invalid("clientDataJSON, authenticatorData, signature and rawId must be base64url")
        }
        let challenge = try await takeChallenge(clientData, purpose: ceremony.purpose, accountID: ceremony.accountID, loginChallengeID: pending?.id)
        guard let passkey = try await store.find(credentialID: Base64URL.encode(rawID)) else { throw Passkeys.invalid("this passkey is not registered here") }
        let (passkeyID, accountID, stored, name) = (passkey.id, passkey.accountID, passkey.signCount, passkey.name)
        if let owner = ceremony.accountID, owner != accountID { throw Passkeys.invalid("this passkey is another account's") }
        guard let keyBytes = Base64URL.decode(passkey.publicKey) else { throw Passkeys.invalid("stored key unreadable") }
        let credential = WebAuthnRelyingParty.Credential(id: rawID, publicKey: try COSEKey(encoded: keyBytes), signCount: UInt32(clamping: stored),
                                                        aaguid: [], backupEligible: false, userVerified: true)
        do {
            let count = try relyingParty.verifyAssertion(credential: credential, clientDataJSON: clientData, authenticatorData: authenticatorData,
                                                         signature: signature, challenge: challenge, requireUserVerification: true)
            // The flags byte after the relying party's hash: BE (0x08), a passkey that can be synced between devices.
            let synced = authenticatorData.count > 32 && authenticatorData[32] & 0x08 != 0
            return Passkeys.Verified(passkeyID: passkeyID, accountID: accountID, name: name, storedCount: stored, newCount: Int64(count),
                                     loginChallengeID: pending?.id, synced: synced)
        } catch let error as WebAuthnError {
            if case .counterDidNotIncrease(let was, let got) = error {
                let account = try await accounts.accountRow(id: accountID)
                try await database.db.withTransaction { tx in
                    try await audit.record(AuditEvent(.passkeyCloneSuspected, by: .anonymous, account: accountID, origin: origin.audit,
                                                            detail: ["name": name, "stored": String(was), "received": String(got)]), on: tx)
                    if let notice = notices.securityNotice(.passkeyCloneSuspected, [name], to: account) { try await outbox.enqueue(notice, on: tx) }
                }
                outbox.signal.wake()
            }
            throw Passkeys.invalid(error.description)
        }
    }

    /// Moves the counter on, in the transaction the assertion allows; false when another request
    /// with the same passkey moved it first.
    package func spend(_ verified: Passkeys.Verified, on tx: any GatehouseDatabase) async throws -> Bool {
        try await store.advanceCounter(of: verified.passkeyID, from: verified.storedCount, to: verified.newCount, at: clock.now(), on: tx)
    }

    /// A random challenge, kept as its hash with what it is for.
    package func issueChallenge(purpose: String, accountID: UUID?, loginChallengeID: UUID?) async throws -> String {
        var generator = SystemRandomNumberGenerator()
        let challenge = Base64URL.encode((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let now = clock.now()
        try await store.addChallenge(Secrets.sha256Hex(challenge), purpose: purpose, accountID: accountID, loginChallengeID: loginChallengeID,
                                     at: now, expiresAt: now.addingTimeInterval(challengeTTL))
        return challenge
    }

    /// Spends the challenge the client data carries, before anything is checked: issued for
    /// `purpose` (and this account, and this login), live, unused.
    package func takeChallenge(_ clientData: [UInt8], purpose: String, accountID: UUID?, loginChallengeID: UUID? = nil) async throws -> [UInt8] {
        guard let text = (try? JSONValue.parse(clientData))?["challenge"]?.string, text.utf8.count <= 200, let bytes = Base64URL.decode(text) else {
            throw Passkeys.invalid("clientDataJSON carries no challenge")
        }
        let taken = try await store.takeChallenge(Secrets.sha256Hex(text), purpose: purpose, accountID: accountID, loginChallengeID: loginChallengeID,
                                                  at: clock.now())
        guard taken else { throw Passkeys.invalid("the challenge is not one this server issued for this, or it was used or expired") }
        return bytes
    }
}
