import FluentKit
import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehouseMessenger
import GatehousePlatform
import SQLKit

/// The wallets and people a payment names (docs/wallet.md): whom a phone, tag or email pays, a
/// person's wallet, and the parties payments show. Every wallet service reads them through it.
package struct WalletDirectory: Sendable {
    package let store: WalletStore
    /// How a phone without a country code is read.
    package let defaultCountryCode: String

    package init(store: WalletStore, defaultCountryCode: String) {
        self.store = store
        self.defaultCountryCode = defaultCountryCode
    }

    /// The key of a reference (`PartyKey`), read with the deployment's default country code.
    package func key(_ reference: PartyReference, field: String) throws -> PartyKey? {
        try PartyKey(reference, field: field, defaultCountryCode: defaultCountryCode)
    }
}

/// Money moved under an idempotency key (docs/wallet.md, "Idempotency"): the key claimed, the
/// body run and its answer stored, in one transaction with the body's events; a key seen before
/// answers what it answered then.
package struct IdempotentWrites: Sendable {
    package let events: EventLog
    package let keys: IdempotencyKeys

    package init(events: EventLog, keys: IdempotencyKeys) {
        self.events = events
        self.keys = keys
    }

    /// Runs a money-moving `body` under `call`'s key in one transaction with its events: answers
    /// the stored answer for a key seen before, or runs `body` and stores its answer with it. A
    /// refusal (`IdempotentRefusal`) is for the surface to remember (`remember`).
    package func run<T: Encodable & Sendable>(_ call: IdempotentCall, _ body: @escaping @Sendable (any GatehouseDatabase, EventRecorder) async throws -> T) async throws -> Idempotent<T> {
        try await events.write { tx, recorder in
            if let stored = try await keys.claim(call, on: tx) { return .replay(stored) }
            let value: T
            do {
                value = try await body(tx, recorder)
            } catch let error as GatehouseError {
                switch error.kind {
                case .unprocessable, .notFound, .conflict, .forbidden: throw IdempotentRefusal(error: error)
                default: throw error
                }
            } catch let refusal as Ledger.Refusal {
                throw IdempotentRefusal(error: Ledger.error(for: refusal))
            }
            let answer = StoredAnswer(status: call.successStatus, body: try V1.encoder.encode(value))
            try await keys.complete(call, answer, on: tx)
            return .fresh(value, answer: answer)
        }
    }

    /// Remembers a refusal as the answer to its Idempotency-Key, so a retry of the same intent gets
    /// the same problem document; answers the one stored first when a concurrent retry won.
    package func remember(_ call: IdempotentCall, _ answer: StoredAnswer, on db: any GatehouseDatabase) async throws -> StoredAnswer? {
        try await keys.remember(call, answer, on: db)
    }
}

/// A refusal met while moving money under an idempotency key (not enough money, a limit, an
/// unknown recipient, a request in the wrong state): the surface remembers it for the key, so a
/// retry answers it again.
package struct IdempotentRefusal: Error {
    package var error: GatehouseError
}

/// One concept of the wallet (wallets and transfers, money requests, top-ups): the rules they
/// share (amounts, comments, a verified phone) and the directory they read parties from. Each
/// concept is given these and the other pieces it uses, by `WalletModule.make`.
package protocol WalletConcept: Sendable {
    var directory: WalletDirectory { get }
    var settings: GatehouseConfiguration.Wallet { get }
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

extension Ledger {
    /// The problem a refusal answers (422 with the limit it met).
    package static func error(for refusal: Refusal) -> GatehouseError {
        switch refusal {
        case .insufficientFunds:
            GatehouseError(.unprocessable, .insufficientFunds, LocalizedText("error.insufficientFunds"))
        case .dailyLimitExceeded(let limit):
            GatehouseError(.unprocessable, .dailyLimitExceeded, LocalizedText("error.dailyLimitExceeded", [Kopecks.format(limit, grouping: " ")]), field: "amount")
        }
    }
}

extension WalletConcept {
    /// The columns of a wallet `w` and its person `a` (`walletRow` reads them).
    package func wallet(of account: UUID, on db: (any GatehouseDatabase)? = nil) async throws -> WalletRow? {
        try await directory.store.wallet(of: account, on: db)
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
        let key = try directory.key(reference, field: field)
        let found = try await resolve([key].compactMap { $0 }, with: me.map { [$0] } ?? [], on: db)
        guard let key, let named = found.named[key] else { throw GatehouseError.notFound(.recipientNotFound, "error.recipientNotFound", field: field) }
        return (named, me.flatMap { found.mine[$0] })
    }

    /// The wallets the keys name and the wallets of the accounts `mine`, in one read.
    package func resolve(_ keys: [PartyKey], with mine: [UUID], restricts: ((SQLQueryString) -> SQLQueryString)? = nil,
                         hasDevices: ((SQLQueryString) -> SQLQueryString)? = nil,
                         on db: (any GatehouseDatabase)? = nil) async throws -> (named: [PartyKey: WalletRow], mine: [UUID: WalletRow]) {
        try await directory.store.wallets(named: keys, mine: mine, restricts: restricts, hasDevices: hasDevices, on: db)
    }

    package func parties(_ ids: Set<UUID>, on db: (any GatehouseDatabase)? = nil) async throws -> [UUID: WalletParty] {
        try await directory.store.parties(ids, on: db)
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
