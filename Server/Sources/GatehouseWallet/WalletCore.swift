import FluentKit
import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehouseMessenger
import GatehousePlatform
import SQLKit

/// What every wallet service shares (docs/wallet.md): the database, the clock, the limits, the
/// ledger, the idempotency keys, the event log (wallet events ride the messenger's per-account
/// sequence) and the chat messages that show payments.
package struct WalletCore: Sendable {
    package let database: DatabaseProvider
    package let clock: GatehouseClock
    package let settings: GatehouseConfiguration.Wallet
    package let publicURL: String
    package let defaultCountryCode: String
    package let rateLimiter: RateLimiter
    package let events: EventLog
    package let ledger: Ledger
    package let keys: IdempotencyKeys
    package let dialogs: PaymentMessages
    package let store: WalletStore

    package init(database: DatabaseProvider, clock: GatehouseClock, settings: GatehouseConfiguration.Wallet, publicURL: String, defaultCountryCode: String, rateLimiter: RateLimiter, events: EventLog, ledger: Ledger, keys: IdempotencyKeys, dialogs: PaymentMessages) {
        self.database = database
        self.clock = clock
        self.settings = settings
        self.publicURL = publicURL
        self.defaultCountryCode = defaultCountryCode
        self.rateLimiter = rateLimiter
        self.events = events
        self.ledger = ledger
        self.keys = keys
        self.dialogs = dialogs
        self.store = WalletStore(database: database, publicURL: publicURL)
    }
}

/// A refusal met while moving money under an idempotency key (not enough money, a limit, an
/// unknown recipient, a request in the wrong state): the surface remembers it for the key, so a
/// retry answers it again.
package struct IdempotentRefusal: Error {
    package var error: GatehouseError
}

/// One concept of the wallet (wallets and transfers, money requests) on the shared core.
package protocol WalletConcept: Sendable {
    var core: WalletCore { get }
}

/// Whom a `PartyReference` names, normalized as the accounts table keeps it.
package enum PartyKey: Hashable, Sendable {
    case phone(String)
    case tag(String)
    case email(String)

    /// The key of a reference (exactly one of phone, tag, email): 400 for a malformed phone or
    /// email or for not exactly one, nil for a tag no account can have.
    package init?(_ reference: PartyReference, field: String, defaultCountryCode: String) throws {
        switch (reference.phone, reference.tag, reference.email) {
        case (let phone?, nil, nil):
            guard let normalized = PhoneNumber.normalize(phone, defaultCountryCode: defaultCountryCode) else {
                throw GatehouseError(.invalidInput, .invalidPhone, LocalizedText("error.invalidPhone", [String(phone.prefix(32))]), field: "\(field).phone")
            }
            self = .phone(normalized)
        case (nil, let tag?, nil):
            guard let normalized = TagRule.normalize(tag) else { return nil }
            self = .tag(normalized)
        case (nil, nil, let email?):
            guard let normalized = EmailAddress.normalize(email) else {
                throw GatehouseError(.invalidInput, .invalidEmail, LocalizedText("error.invalidEmail", [String(email.prefix(64))]), field: "\(field).email")
            }
            self = .email(normalized)
        default:
            throw GatehouseError(.invalidInput, .invalidParameter, LocalizedText("error.oneRecipient"), field: field)
        }
    }
}

/// A person's wallet row, with the person as payments show them.
package struct WalletRow: Sendable {
    package var id: UUID
    package var account: UUID
    package var phone: String?
    package var balance: Int64
    /// The day's payouts (`Ledger.Balance`) as read; the ledger reads them again under the row's lock.
    package var paidDay: Int64
    package var paidToday: Int64
    package var createdAt: Date
    package var party: WalletParty
    /// Whether the account takes messages only from some (friends only, a block list): read only
    /// where asked (`WalletStore.wallets(named:mine:restricts:hasDevices:on:)`), false elsewhere.
    package var restricts = false
    /// Whether the account has a push device: read only where asked, true elsewhere.
    package var hasDevices = true
}

extension WalletConcept {
    package var database: DatabaseProvider { core.database }
    package var clock: GatehouseClock { core.clock }
    package var settings: GatehouseConfiguration.Wallet { core.settings }

    /// Runs a money-moving `body` under `call`'s key in one transaction with its events: answers
    /// the stored answer for a key seen before, or runs `body` and stores its answer with it.
    package func idempotent<T: Encodable & Sendable>(_ call: IdempotentCall, _ body: @escaping @Sendable (any GatehouseDatabase, EventRecorder) async throws -> T) async throws -> Idempotent<T> {
        try await core.events.write { tx, recorder in
            if let stored = try await core.keys.claim(call, on: tx) { return .replay(stored) }
            let value: T
            do {
                value = try await body(tx, recorder)
            } catch let error as GatehouseError {
                switch error.kind {
                case .unprocessable, .notFound, .conflict, .forbidden: throw IdempotentRefusal(error: error)
                default: throw error
                }
            } catch let refusal as Ledger.Refusal {
                throw IdempotentRefusal(error: Self.error(for: refusal))
            }
            let answer = StoredAnswer(status: call.successStatus, body: try V1.encoder.encode(value))
            try await core.keys.complete(call, answer, on: tx)
            return .fresh(value, answer: answer)
        }
    }

    package static func error(for refusal: Ledger.Refusal) -> GatehouseError {
        switch refusal {
        case .insufficientFunds:
            GatehouseError(.unprocessable, .insufficientFunds, LocalizedText("error.insufficientFunds"))
        case .dailyLimitExceeded(let limit):
            GatehouseError(.unprocessable, .dailyLimitExceeded, LocalizedText("error.dailyLimitExceeded", [Kopecks.format(limit, grouping: " ")]), field: "amount")
        }
    }

    /// The columns of a wallet `w` and its person `a` (`walletRow` reads them).
    package func wallet(of account: UUID, on db: (any GatehouseDatabase)? = nil) async throws -> WalletRow? {
        try await core.store.wallet(of: account, on: db)
    }

    package func requireWallet(of account: UUID, on db: (any GatehouseDatabase)? = nil) async throws -> WalletRow {
        guard let wallet = try await wallet(of: account, on: db) else { throw GatehouseError.notFound(.walletNotFound, "error.walletNotFound") }
        return wallet
    }

    /// Money leaves a wallet only while its owner's phone is verified (a wallet is a phone's).
    package func requireVerifiedPhone(_ account: AccountSnapshot) throws {
        guard account.phone != nil, account.phoneVerifiedAt != nil else {
            throw GatehouseError(.conflict, .phoneNotVerified, LocalizedText("error.phoneNotVerified"))
        }
    }

    /// The account a reference names and its wallet; 404 `recipient_not_found` for nobody and for
    /// someone without a wallet (`field` names the member). A phone counts when verified, an
    /// email when confirmed: an unproven claim names nobody.
    package func resolve(_ reference: PartyReference, field: String, on db: (any GatehouseDatabase)? = nil) async throws -> WalletRow {
        try await resolve(reference, field: field, with: nil, on: db).named
    }

    /// The same, and in the same query the wallet of `me` (a payment needs both; nil when I have none).
    package func resolve(_ reference: PartyReference, field: String, with me: UUID?, on db: (any GatehouseDatabase)? = nil) async throws -> (named: WalletRow, mine: WalletRow?) {
        let key = try PartyKey(reference, field: field, defaultCountryCode: core.defaultCountryCode)
        let found = try await resolve([key].compactMap { $0 }, with: me.map { [$0] } ?? [], on: db)
        guard let key, let named = found.named[key] else { throw GatehouseError.notFound(.recipientNotFound, "error.recipientNotFound", field: field) }
        return (named, me.flatMap { found.mine[$0] })
    }

    /// The wallets the keys name and the wallets of the accounts `mine`, in one read.
    package func resolve(_ keys: [PartyKey], with mine: [UUID], restricts: ((SQLQueryString) -> SQLQueryString)? = nil,
                         hasDevices: ((SQLQueryString) -> SQLQueryString)? = nil,
                         on db: (any GatehouseDatabase)? = nil) async throws -> (named: [PartyKey: WalletRow], mine: [UUID: WalletRow]) {
        try await core.store.wallets(named: keys, mine: mine, restricts: restricts, hasDevices: hasDevices, on: db)
    }

    package func parties(_ ids: Set<UUID>, on db: (any GatehouseDatabase)? = nil) async throws -> [UUID: WalletParty] {
        try await core.store.parties(ids, on: db)
    }

    package func requirePositive(_ amount: Int64) throws {
        guard amount >= 1 else { throw GatehouseError(.invalidInput, .invalidAmount, LocalizedText("error.invalidAmount"), field: "amount") }
    }

    /// An amount as sent: at least one kopeck, at most the configured largest transfer.
    package func checkAmount(_ amount: Int64) throws {
        try requirePositive(amount)
        guard amount <= settings.maxTransfer else {
            throw GatehouseError(.unprocessable, .transferLimitExceeded, LocalizedText("error.transferLimitExceeded", [Kopecks.format(settings.maxTransfer, grouping: " ")]), field: "amount")
        }
    }

    /// A comment as stored: trimmed, NFC, no control characters, within the limit; empty is none.
    package func cleanComment(_ raw: String?) throws -> String? {
        guard let raw else { return nil }
        let text = raw.precomposedStringWithCanonicalMapping.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control && $0 != "\n" }) else {
            throw GatehouseError(.invalidInput, .invalidText, LocalizedText("error.invalidText"), field: "comment")
        }
        guard text.count <= settings.maxComment else {
            throw GatehouseError.invalid(.fieldTooLong, "error.fieldTooLong", "comment", String(settings.maxComment)).on(field: "comment")
        }
        return text.isEmpty ? nil : text
    }
}
