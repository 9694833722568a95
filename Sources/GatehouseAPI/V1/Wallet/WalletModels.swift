import Foundation

/// `GET /v1/wallet`: my wallet.
public struct WalletInfo: Codable, Sendable, Equatable {
    /// Its id.
    public var id: UUID
    /// The verified phone the wallet is attached to (E.164).
    public var phone: String
    /// Always ``V1/Wallet/currency``.
    public var currency: String
    /// In kopecks.
    public var balance: Int64
    /// When it was made.
    public var createdAt: Date
    /// Whether money can be put in through the server's payment provider (`POST /v1/wallet/topups`); an app offers
    /// "Top up" only then. Nil from a server before 1.2, which did not say.
    public var topUps: Bool?
    /// Makes one of its members, each as its property describes.
    public init(id: UUID, phone: String, currency: String, balance: Int64, createdAt: Date, topUps: Bool? = nil) {
        self.id = id
        self.phone = phone
        self.currency = currency
        self.balance = balance
        self.createdAt = createdAt
        self.topUps = topUps
    }
}

/// Whom to pay or ask: exactly one of a phone (any usual spelling), a tag or an email.
public struct PartyReference: Codable, Sendable, Equatable {
    /// The phone number, in E.164.
    public var phone: String?
    /// The public `@handle`, without the `@`.
    public var tag: String?
    /// The email address.
    public var email: String?
    /// Makes one of its members, each as its property describes.
    public init(phone: String? = nil, tag: String? = nil, email: String? = nil) {
        self.phone = phone
        self.tag = tag
        self.email = email
    }
}

/// A person on the other side of a payment, as I may see them.
public struct WalletParty: Codable, Sendable, Equatable {
    /// Its id.
    public var id: UUID
    /// The public `@handle`, without the `@`.
    public var tag: String?
    /// The first name.
    public var firstName: String?
    /// The last name.
    public var lastName: String?
    /// Absolute URL of the avatar image, if any.
    public var avatarUrl: String?
    /// Makes one of its members, each as its property describes.
    public init(id: UUID, tag: String?, firstName: String?, lastName: String?, avatarUrl: String?) {
        self.id = id
        self.tag = tag
        self.firstName = firstName
        self.lastName = lastName
        self.avatarUrl = avatarUrl
    }

    /// "First Last", else the tag.
    public var displayName: String {
        let name = [firstName, lastName].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: " ")
        return name.isEmpty ? (tag.map { "@" + $0 } ?? "") : name
    }
}

/// `POST /v1/wallet/transfers`.
public struct NewTransfer: Codable, Sendable, Equatable {
    /// Whom to pay: an account id, a tag or a phone number.
    public var to: PartyReference
    /// In kopecks, at least 1.
    public var amount: Int64
    /// Up to `GATEHOUSE_WALLET_MAX_COMMENT_LENGTH` characters; the chat message's text.
    public var comment: String?
    /// Makes one of its members, each as its property describes.
    public init(to: PartyReference, amount: Int64, comment: String? = nil) {
        self.to = to
        self.amount = amount
        self.comment = comment
    }
}

/// Why money moved.
public enum TransferKind: String, Codable, Sendable, CaseIterable {
    /// One person paid another.
    case transfer
    /// An operator credited a wallet (`gatehouse wallet credit`).
    case topup
    /// A money request was confirmed: its payer paid its requester.
    case requestPayment = "request_payment"
    /// A borrower paid a loan back.
    case repayment
    /// An operator took a top-up back (a mistaken credit, a refunded payment): the amount leaves
    /// the wallet to the system, with the operator's reason as its comment.
    case reversal
}

/// One movement of money between two wallets (a balanced ledger transaction).
public struct Transfer: Codable, Sendable, Equatable {
    /// Its id.
    public var id: UUID
    /// A payment, a loan, its repayment, a top-up or an operator's credit.
    public var kind: TransferKind
    /// Absent for a top-up.
    public var from: WalletParty?
    /// Who received it.
    public var to: WalletParty
    /// In kopecks.
    public var amount: Int64
    /// The payer's comment.
    public var comment: String?
    /// The request it paid or repaid.
    public var requestId: UUID?
    /// When it was made.
    public var createdAt: Date
    /// Makes one of its members, each as its property describes.
    public init(id: UUID, kind: TransferKind, from: WalletParty?, to: WalletParty, amount: Int64, comment: String?, requestId: UUID?, createdAt: Date) {
        self.id = id
        self.kind = kind
        self.from = from
        self.to = to
        self.amount = amount
        self.comment = comment
        self.requestId = requestId
        self.createdAt = createdAt
    }
}

/// A transfer and my balance after it: the answer of a payment, and the `wallet.transfer` event.
public struct TransferResult: Codable, Sendable, Equatable {
    /// The transfer.
    public var transfer: Transfer
    /// My balance right after the transfer, in kopecks.
    public var balance: Int64
    /// Makes one of its members, each as its property describes.
    public init(transfer: Transfer, balance: Int64) {
        self.transfer = transfer
        self.balance = balance
    }
}

/// One line of my wallet's history.
public struct WalletTransaction: Codable, Sendable, Equatable {
    /// The transfer's id.
    public var id: UUID
    /// What kind of movement it was.
    public var kind: TransferKind
    /// Signed from my side, in kopecks: negative when I paid.
    public var amount: Int64
    /// The other person; absent for a top-up.
    public var counterparty: WalletParty?
    /// The comment.
    public var comment: String?
    /// The money request it paid, if any.
    public var requestId: UUID?
    /// My balance after it, in kopecks.
    public var balanceAfter: Int64
    /// When it was made.
    public var createdAt: Date
    /// Makes one of its members, each as its property describes.
    public init(id: UUID, kind: TransferKind, amount: Int64, counterparty: WalletParty?, comment: String?, requestId: UUID?, balanceAfter: Int64, createdAt: Date) {
        self.id = id
        self.kind = kind
        self.amount = amount
        self.counterparty = counterparty
        self.comment = comment
        self.requestId = requestId
        self.balanceAfter = balanceAfter
        self.createdAt = createdAt
    }
}

/// A page of my wallet's history, newest first.
public struct WalletTransactionPage: Codable, Sendable, Equatable {
    /// This page's items, in the list's order.
    public var items: [WalletTransaction]
    /// The cursor of the next page; nil on the last one.
    public var nextCursor: String?
    /// Makes one of its members, each as its property describes.
    public init(items: [WalletTransaction], nextCursor: String?) {
        self.items = items
        self.nextCursor = nextCursor
    }
}

/// What a money request asks for.
public enum MoneyRequestKind: String, Codable, Sendable, CaseIterable {
    /// Pay me (a bill).
    case invoice
    /// Lend me; I repay it later with one action.
    case loan
}

/// Where a money request stands. `open` is the only state that takes confirm, decline or cancel;
/// a `paid` loan takes repay (→ `repaid`). Every other move is `409`.
public enum MoneyRequestState: String, Codable, Sendable, CaseIterable {
    /// Waiting; paid; declined by the payer; cancelled by the asker; past its time; a loan repaid.
    case open, paid, declined, cancelled, expired, repaid
}

/// `POST /v1/wallet/requests`: I ask `from` for money.
public struct NewMoneyRequest: Codable, Sendable, Equatable {
    /// Whom to ask: an account id, a tag or a phone number.
    public var from: PartyReference
    /// In kopecks, at least 1.
    public var amount: Int64
    /// A payment asked, or a loan.
    public var kind: MoneyRequestKind
    /// The asker's comment.
    public var comment: String?
    /// Makes one of its members, each as its property describes.
    public init(from: PartyReference, amount: Int64, kind: MoneyRequestKind, comment: String? = nil) {
        self.from = from
        self.amount = amount
        self.kind = kind
        self.comment = comment
    }
}

/// A request for money from its requester to its payer.
public struct MoneyRequest: Codable, Sendable, Equatable {
    /// Its id.
    public var id: UUID
    /// A payment asked, or a loan.
    public var kind: MoneyRequestKind
    /// Where it stands.
    public var state: MoneyRequestState
    /// In kopecks.
    public var amount: Int64
    /// The asker's comment.
    public var comment: String?
    /// Who asked (and is paid).
    public var requester: WalletParty
    /// Who is asked (and pays).
    public var payer: WalletParty
    /// When it was made.
    public var createdAt: Date
    /// When it last changed.
    public var updatedAt: Date
    /// An open request past this instant is `expired`.
    public var expiresAt: Date
    /// The transfer that paid it.
    public var paymentId: UUID?
    /// The transfer that repaid it (a loan).
    public var repaymentId: UUID?
    /// Makes one of its members, each as its property describes.
    public init(id: UUID, kind: MoneyRequestKind, state: MoneyRequestState, amount: Int64, comment: String?, requester: WalletParty, payer: WalletParty,
                createdAt: Date, updatedAt: Date, expiresAt: Date, paymentId: UUID?, repaymentId: UUID?) {
        self.id = id
        self.kind = kind
        self.state = state
        self.amount = amount
        self.comment = comment
        self.requester = requester
        self.payer = payer
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.expiresAt = expiresAt
        self.paymentId = paymentId
        self.repaymentId = repaymentId
    }
}

/// A page of money requests, newest first.
public struct MoneyRequestPage: Codable, Sendable, Equatable {
    /// This page's items, in the list's order.
    public var items: [MoneyRequest]
    /// The cursor of the next page; nil on the last one.
    public var nextCursor: String?
    /// Makes one of its members, each as its property describes.
    public init(items: [MoneyRequest], nextCursor: String?) {
        self.items = items
        self.nextCursor = nextCursor
    }
}

/// The answer of confirm and repay: the request after it, the transfer, my new balance.
public struct RequestPayment: Codable, Sendable, Equatable {
    /// The request, now paid.
    public var request: MoneyRequest
    /// The transfer that paid it.
    public var transfer: Transfer
    /// My balance right after, in kopecks.
    public var balance: Int64
    /// Makes one of its members, each as its property describes.
    public init(request: MoneyRequest, transfer: Transfer, balance: Int64) {
        self.request = request
        self.transfer = transfer
        self.balance = balance
    }
}

/// What a wallet message in a chat stands for. The message's text is the comment.
public struct PaymentNote: Codable, Sendable, Equatable {
    /// What the message in the chat says happened.
    public enum Kind: String, Codable, Sendable, CaseIterable {
        /// The author sent money.
        case transfer
        /// The author asked for money (the request's state: `GET /v1/wallet/requests/{id}` and `wallet.request.updated`).
        case request
        /// The author paid a request.
        case requestPaid = "request_paid"
        /// The author repaid a loan.
        case repayment
    }
    /// What happened.
    public var kind: Kind
    /// In kopecks.
    public var amount: Int64
    /// The transfer, when there is one.
    public var transferId: UUID?
    /// The money request, when there is one.
    public var requestId: UUID?
    /// The request's kind, when there is one.
    public var requestKind: MoneyRequestKind?
    /// Makes one of its members, each as its property describes.
    public init(kind: Kind, amount: Int64, transferId: UUID?, requestId: UUID?, requestKind: MoneyRequestKind?) {
        self.kind = kind
        self.amount = amount
        self.transferId = transferId
        self.requestId = requestId
        self.requestKind = requestKind
    }
}

/// Amounts in kopecks as people write them: "100", "100.5", "100,50", "1 234.56".
public enum Kopecks {
    /// The amount in kopecks, or nil when the text is not a positive amount with at most two
    /// decimals (or exceeds `limit`).
    public static func parse(_ text: String, limit: Int64 = 1_000_000_000_000) -> Int64? {
        let cleaned = text.filter { !$0.isWhitespace && $0 != "\u{00A0}" && $0 != "\u{202F}" && $0 != "₽" }
        let parts = cleaned.replacingOccurrences(of: ",", with: ".").split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let whole = parts.first, !whole.isEmpty, whole.count <= 13,
              whole.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        var fraction = parts.count == 2 ? String(parts[1]) : ""
        guard fraction.count <= 2, fraction.allSatisfy({ $0.isASCII && $0.isNumber }), parts.count == 1 || !fraction.isEmpty else { return nil }
        while fraction.count < 2 { fraction += "0" }
        guard let roubles = Int64(whole), let kopecks = Int64(fraction) else { return nil }
        let (value, overflow) = roubles.multipliedReportingOverflow(by: 100)
        guard !overflow, value + kopecks <= limit else { return nil }
        return value + kopecks
    }

    /// "1 234.56" (a thin grouping space, a point, always two decimals; a minus when negative).
    public static func format(_ kopecks: Int64, grouping: String = "\u{202F}", decimal: String = ".") -> String {
        let magnitude = kopecks.magnitude
        var whole = String(magnitude / 100)
        var groups: [String] = []
        while whole.count > 3 {
            groups.insert(String(whole.suffix(3)), at: 0)
            whole = String(whole.dropLast(3))
        }
        groups.insert(whole, at: 0)
        let cents = magnitude % 100
        return (kopecks < 0 ? "-" : "") + groups.joined(separator: grouping) + decimal + (cents < 10 ? "0" : "") + String(cents)
    }
}

/// `POST /v1/wallet/topups`: how much to put into my wallet, in kopecks.
public struct NewTopUp: Codable, Sendable, Equatable {
    /// In kopecks, within the server's top-up limits.
    public var amount: Int64
    /// Makes one of its members, each as its property describes.
    public init(amount: Int64) {
        self.amount = amount
    }
}

/// Where a top-up stands.
public enum TopUpState: String, Codable, Sendable, CaseIterable {
    /// Waiting for the person to pay on the provider's page (`confirmationUrl`).
    case pending
    /// Paid and credited: `transferId` is the wallet movement.
    case paid
    /// The provider's page expired, or the payment failed: nothing was credited.
    case expired
}

/// Money put into a wallet through the payment provider (docs/wallet.md, "Money in"): the app
/// opens `confirmationUrl` in a browser, and the provider's signed notification credits the wallet.
public struct TopUp: Codable, Sendable, Equatable {
    /// Its id.
    public var id: UUID
    /// In kopecks.
    public var amount: Int64
    /// The currency (`RUB`).
    public var currency: String
    /// Where it stands.
    public var state: TopUpState
    /// The provider's payment page; nil once the top-up is no longer pending.
    public var confirmationUrl: String?
    /// The wallet movement that credited it, once paid.
    public var transferId: UUID?
    /// How much of it was refunded since, in kopecks.
    public var refunded: Int64
    /// When it was made.
    public var createdAt: Date
    /// When the provider said it was paid; nil until then.
    public var paidAt: Date?

    /// Makes one of its members, each as its property describes.
    public init(id: UUID, amount: Int64, currency: String, state: TopUpState, confirmationUrl: String?, transferId: UUID?, refunded: Int64,
                createdAt: Date, paidAt: Date?) {
        self.id = id
        self.amount = amount
        self.currency = currency
        self.state = state
        self.confirmationUrl = confirmationUrl
        self.transferId = transferId
        self.refunded = refunded
        self.createdAt = createdAt
        self.paidAt = paidAt
    }
}
