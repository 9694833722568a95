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

/// How the wallet's screens write money and payments: one place, so every screen says it alike.
public enum WalletFormat {
    /// "1 234,56 ₽" in Russian, "1 234.56 ₽" in English: the amount before the sign, with a thin
    /// space between groups, as roubles are written.
    public static func money(_ kopecks: Int64, _ localizer: Localizer) -> String {
        Kopecks.format(kopecks, decimal: localizer.language == "ru" ? "," : ".") + " ₽"
    }

    /// A signed amount from my side: "+100.00 ₽" or "−250.50 ₽".
    public static func signed(_ kopecks: Int64, _ localizer: Localizer) -> String {
        (kopecks < 0 ? "−" : "+") + money(kopecks == .min ? .max : abs(kopecks), localizer)
    }

    /// One line for a payment message, from the reader's side: "You sent 250.50 ₽", "Ann asks
    /// you for 100.00 ₽ (loan)", ….
    public static func note(_ note: PaymentNote, mine: Bool, other: String, _ l: Localizer) -> String {
        let amount = money(note.amount, l)
        let kind = note.requestKind.map { l("wallet.kind.\($0.rawValue)") } ?? ""
        switch (note.kind, mine) {
        case (.transfer, true): return l("wallet.note.sent", amount)
        case (.transfer, false): return l("wallet.note.received", other, amount)
        case (.request, true): return l("wallet.note.askedThem", other, amount, kind)
        case (.request, false): return l("wallet.note.askedYou", other, amount, kind)
        case (.requestPaid, true): return l("wallet.note.youPaid", amount)
        case (.requestPaid, false): return l("wallet.note.theyPaid", other, amount)
        case (.repayment, true): return l("wallet.note.youRepaid", amount)
        case (.repayment, false): return l("wallet.note.theyRepaid", other, amount)
        }
    }

    static func name(_ person: Person) -> String {
        WalletParty(id: person.id, tag: person.tag, firstName: person.firstName, lastName: person.lastName, avatarUrl: nil).displayName
    }
}
