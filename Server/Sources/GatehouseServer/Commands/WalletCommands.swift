import Foundation
import GatehouseAPI
import GatehouseFoundation

/// `gatehouse wallet …`: an operator credits a wallet and audits the ledger, straight on the
/// database (no server needed; a running server's sockets hear of a credit through the event bus
/// on PostgreSQL, and on their next resume on SQLite).
///
/// The credit is the boundary where a deployment's payment provider plugs in (docs/wallet.md,
/// "Money in"): its webhook would call the same `WalletService.credit` with its payment's id as
/// the reason.
public enum WalletCommands {
    /// What `credit` prints.
    public struct Credit: Encodable, Sendable {
        public var transferId: UUID
        public var accountId: UUID
        public var amount: Int64
        public var balance: Int64
        public var reason: String?
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Credits the wallet of the verified phone with `amount` ("100.00" roubles). A `reference`
    /// (the payment provider's id) credits once however often the command is repeated.
    public static func credit(configuration: GatehouseConfiguration, phone: String, amount: String, reason: String?,
                              reference: String? = nil, as person: String? = nil) async throws -> Credit {
        guard let kopecks = Kopecks.parse(amount), kopecks > 0 else {
            throw Failure(description: "--amount must be a positive amount in roubles with at most two decimals, such as 100.00")
        }
        return try await withServices(configuration) { services in
            let result = try await services.wallet.wallets.credit(phone: phone, amount: kopecks, reason: reason, reference: reference,
                                                                 by: .system(person.map { String($0.prefix(100)) }))
            return Credit(transferId: result.transfer.id, accountId: result.transfer.to.id, amount: kopecks, balance: result.balance, reason: result.transfer.comment)
        }
    }

    /// What `refund` did.
    public enum Refund: String, Encodable, Sendable {
        /// A credit made by hand, reversed in the ledger.
        case reversed
        /// Paid through the provider: refunded there and moved out of the wallet.
        case refunded
        /// It had been given back before: nothing changed.
        case before
        /// The provider accepted the refund and will confirm it; the wallet follows then.
        case pending
    }

    /// Gives a top-up's money back (`transfer` is its movement): refunded at the payment provider
    /// when it was paid there, reversed in the ledger when it was credited by hand. Refused when the
    /// wallet no longer holds the amount.
    public static func refund(configuration: GatehouseConfiguration, transfer: String, reason: String, as person: String? = nil) async throws -> Refund {
        guard let id = UUID(uuidString: transfer) else { throw Failure(description: "--transfer must be the top-up movement's id (a UUID)") }
        return try await withServices(configuration) { services in
            let done = try await services.wallet.topUps.giveBack(transfer: id, reason: reason, by: .system(person.map { String($0.prefix(100)) }))
            return Refund(rawValue: done.rawValue) ?? .refunded
        }
    }

    /// The ledger's invariants; an empty list when they all hold.
    public static func audit(configuration: GatehouseConfiguration) async throws -> [String] {
        try await withServices(configuration) { try await $0.wallet.wallets.audit() }
    }

    private static func withServices<T>(_ configuration: GatehouseConfiguration, _ body: (GatehouseServices) async throws -> T) async throws -> T {
        try await OperatorCommands.withServices(configuration, failure: { Failure(description: $0) }, body)
    }
}
