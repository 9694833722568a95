import Foundation
import GatehouseAPI
import GatehouseKit
import GatehouseServer
import GatehouseTestSupport

/// Wallet helpers for the in-process server.
extension LiveServer {
    /// A messenger user (`<tag>@example.com`, `Secret-42!`) with a verified phone and a wallet.
    func walletUser(_ tag: String, phone: String, transport: (any HTTPTransport)? = nil) async throws -> (accounts: AccountsClient, wallet: WalletClient, id: UUID) {
        let user = try await messengerUser(tag, firstName: tag.capitalized)
        _ = try await user.accounts.requestPhoneVerification(phone, currentPassword: "Secret-42!")
        _ = try await user.accounts.verifyPhone(phone, code: try await latestCodeV1(to: phone))
        let wallet = WalletClient(core: user.accounts.core, retryDelay: 0.01)
        _ = try await wallet.attach()
        return (user.accounts, wallet, user.id)
    }

    /// The operator's top-up (`gatehouse wallet credit`).
    func credit(_ phone: String, _ roubles: String) async throws {
        _ = try await WalletCommands.credit(configuration: configuration, phone: phone, amount: roubles, reason: "test top-up")
    }
}
