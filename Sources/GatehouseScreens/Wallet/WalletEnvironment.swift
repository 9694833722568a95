import Foundation
import GatehouseAPI
import GatehouseKit

/// What the wallet's screens need (the wallet spec): the account screens' environment (login and
/// sign-up are the messenger's screens: the same account, the same fields), the wallet's client,
/// and the messenger's client for the dialogs (a wallet dialog is a messenger chat).
public struct WalletEnvironment: Sendable {
    /// The account side: the `/v1` client, strings, clock, password rule, device label.
    public var accounts: MessengerEnvironment
    /// The wallet's client.
    public var wallet: WalletClient
    /// The dialogs' client.
    public var messenger: MessengerClient

    /// Creates an environment whose wallet and messenger clients share the accounts client's session.
    public init(accounts: MessengerEnvironment) {
        self.accounts = accounts
        self.wallet = WalletClient(core: accounts.client.core)
        self.messenger = MessengerClient(core: accounts.client.core)
    }

    var localizer: Localizer { accounts.localizer }
    var client: AccountsClient { accounts.client }

    func message(for error: any Error) -> String? { accounts.message(for: error) }
}
