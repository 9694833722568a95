import Foundation
import GatehouseFoundation

/// Revoking a person's authorization at Apple when it ends here (docs/social-login.md, "Deletion revokes"): the
/// refresh token kept sealed with the identity is taken out of its row and queued in the outbox, in the transaction
/// that ends the link or asks for the account's deletion; the outbox's `revocation` lane posts it to Apple's
/// `/auth/revoke`, again and again while Apple is away, and never holds the account's erasure back.
package enum IdentityRevocations {
    /// Queues the revocation of every refresh token the account's identities hold, in the caller's transaction.
    /// `identity`: that identity's only (it is being unlinked).
    package static func enqueue(of accountID: UUID, identity: UUID? = nil, database: DatabaseProvider, outbox: Outbox,
                                on tx: any GatehouseDatabase) async throws {
        for token in try await IdentityStore(database: database).takeRefreshTokens(of: accountID, identity: identity, on: tx) {
            try await outbox.enqueue(OutgoingMessage(kind: .revocation, destination: token.provider, subject: token.clientID, body: token.sealed, code: nil),
                                     on: tx)
        }
    }

    /// The purpose the refresh tokens are sealed for.
    static let sealPurpose = "identity refresh token"
}

/// The outbox's channel for revocations: opens the sealed token and asks its provider to revoke it. Apple's refusal
/// (the token revoked already, say) is final; Apple away is tried again on the outbox's schedule.
package struct IdentityRevocationChannel: DeliveryChannel {
    package let apple: AppleEndpoints?
    package let secrets: Secrets
    package var name: String { "identity provider" }

    package init(apple: AppleEndpoints?, secrets: Secrets) {
        self.apple = apple
        self.secrets = secrets
    }

    package func deliver(_ message: OutgoingMessage) async throws {
        guard message.destination == IdentityProvider.apple.rawValue, let clientID = message.subject else {
            throw DeliveryError.permanent("no provider revokes \(message.destination)'s tokens")
        }
        guard let apple else { throw DeliveryError.permanent("Apple's key is not configured (GATEHOUSE_APPLE_KEY_FILE)") }
        guard let token = try? secrets.open(message.body, purpose: IdentityRevocations.sealPurpose) else {
            throw DeliveryError.permanent("the sealed token does not open with this server's secret")
        }
        do {
            try await apple.revoke(refreshToken: String(decoding: token, as: UTF8.self), clientID: clientID)
        } catch AppleEndpoints.Failure.refused(let why) {
            throw DeliveryError.permanent("Apple refused: \(why)")
        } catch AppleEndpoints.Failure.unavailable(let why) {
            throw DeliveryError.transient(why)
        }
    }
}

/// The identities' part in deleting an account: the request queues the revocations at Apple; the erasure queues any
/// left (a sign-in with Apple meanwhile took the account back and brought a new token, and a new request followed)
/// and removes the identities and their link offers.
package struct IdentityDeletion: AccountDeletionParticipant {
    package let database: DatabaseProvider
    package let outbox: Outbox

    package init(database: DatabaseProvider, outbox: Outbox) {
        self.database = database
        self.outbox = outbox
    }

    package func checkDeletable(_ account: UUID, on db: any GatehouseDatabase) async throws {}

    package func deletionRequested(_ account: UUID, now: Date, on tx: any GatehouseDatabase) async throws {
        try await IdentityRevocations.enqueue(of: account, database: database, outbox: outbox, on: tx)
    }

    package func erase(_ account: UUID, now: Date, on tx: any GatehouseDatabase) async throws {
        try await IdentityRevocations.enqueue(of: account, database: database, outbox: outbox, on: tx)
        try await IdentityStore(database: database).removeAll(of: account, on: tx)
    }
}
