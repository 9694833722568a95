import Foundation
import GatehouseAPI
import GatehouseKit

/// How money and payments are written: one place, so every screen says it alike (the wallet's, and the messenger's
/// chats, where payments are messages).
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
