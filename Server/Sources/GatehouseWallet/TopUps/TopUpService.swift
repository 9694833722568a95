import FluentKit
import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import Logging

/// Money in through a payment provider (docs/wallet.md, "Money in"). A top-up is a payment the
/// person makes on the provider's page; the provider's signed notification credits the wallet, in
/// one transaction with the top-up's new state, its event and its audit record, once: the
/// movement's reference is the provider's payment id (a unique column), and the top-up's state
/// changes from unpaid to paid in the transaction's first statement, so a second delivery, or two
/// at once, find it paid and move nothing. A refund at the provider moves its amount back to the
/// system wallet, once per refund id, never more than was paid.
package struct TopUpService: WalletConcept {
    package let clock: GatehouseClock
    package let settings: GatehouseConfiguration.Wallet
    let publicURL: String
    let rateLimiter: RateLimiter
    let events: EventLog
    let ledger: Ledger
    let audit: AuditLog
    package let directory: WalletDirectory
    package let provider: (any PaymentProvider)?
    /// A reversal of a top-up (`WalletService.reverse`).
    package let wallets: WalletService
    package let store: TopUpStore
    package let logger: Logger

    private var topUps: GatehouseConfiguration.Wallet.TopUps { settings.topUps }
    package static let notFound = GatehouseError.notFound(.topUpNotFound, "error.topUpNotFound")

    package init(database: DatabaseProvider, clock: GatehouseClock, settings: GatehouseConfiguration.Wallet, publicURL: String, rateLimiter: RateLimiter,
                 events: EventLog, ledger: Ledger, audit: AuditLog, directory: WalletDirectory, provider: (any PaymentProvider)?, wallets: WalletService,
                 logger: Logger) {
        self.clock = clock
        self.settings = settings
        self.publicURL = publicURL
        self.rateLimiter = rateLimiter
        self.events = events
        self.ledger = ledger
        self.audit = audit
        self.directory = directory
        self.provider = provider
        self.wallets = wallets
        self.store = TopUpStore(database: database)
        self.logger = logger
    }

    /// A page left unpaid this long reads as expired (Stripe's sessions last 24 hours).
    package static let pageLifetime: TimeInterval = 25 * 3_600

    package func view(_ row: TopUpRow) -> TopUp {
        var state: TopUpState = switch row.state { case .pending: .pending; case .paid: .paid; case .expired: .expired }
        if state == .pending, clock.now().timeIntervalSince(row.createdAt) > Self.pageLifetime { state = .expired }
        return TopUp(id: row.id, amount: row.amount, currency: row.currency, state: state, confirmationUrl: state == .pending ? row.confirmationURL : nil,
                     transferId: row.transfer, refunded: row.refunded, createdAt: row.createdAt, paidAt: row.paidAt)
    }

    // MARK: - the person

    /// Starts a top-up: the row, under the call's `Idempotency-Key`, then the provider's payment.
    /// The same key and body answer the same top-up (`fresh` false); should the provider have
    /// failed the first time, the retry asks it again, with the top-up's id as the provider's own
    /// idempotency key, so at most one payment exists per top-up.
    package func create(_ account: AccountSnapshot, _ input: NewTopUp, key: String, fingerprint: String) async throws -> (topUp: TopUp, fresh: Bool) {
        guard let provider else { throw GatehouseError(.conflict, .topUpsUnavailable, LocalizedText("error.topUpsUnavailable")) }
        guard (topUps.minAmount...topUps.maxAmount).contains(input.amount) else {
            throw GatehouseError(.unprocessable, .invalidAmount, LocalizedText("error.topUpAmount", [Kopecks.format(topUps.minAmount, grouping: " "),
                                                                                                   Kopecks.format(topUps.maxAmount, grouping: " ")]), field: "amount")
        }
        let wallet = try await requireWallet(of: account.id)
        let reused = GatehouseError(.unprocessable, .idempotencyKeyReused, LocalizedText("error.idempotencyKeyReused"), field: V1.Wallet.idempotencyKeyHeader)
        var row: TopUpRow
        var fresh = true
        if let earlier = try await store.topUp(account: account.id, key: key) {
            guard earlier.fingerprint == fingerprint else { throw reused }
            if earlier.payment != nil { return (view(earlier), false) }
            row = earlier
            fresh = false
        } else {
            try await rateLimiter.hit("wallet-topups", key: account.id.uuidString, limit: topUps.perDay, window: 86_400)
            let now = clock.now()
            row = TopUpRow(id: OrderedID.make(), account: account.id, wallet: wallet.id, provider: provider.name, payment: nil, paymentIntent: nil,
                           amount: input.amount, currency: V1.Wallet.currency, state: .pending, confirmationURL: nil, key: key, fingerprint: fingerprint,
                           transfer: nil, refunded: 0, createdAt: now, paidAt: nil)
            do {
                try await store.insert(row)
            } catch where error.isConstraintViolation {
                // The same key at the same moment: the other call made it.
                guard let earlier = try await store.topUp(account: account.id, key: key), earlier.fingerprint == fingerprint else { throw reused }
                if earlier.payment != nil { return (view(earlier), false) }
                row = earlier
                fresh = false
            }
        }
        let returnURL = topUps.returnURL ?? "\(publicURL)/topup-return?topup={id}"
        let checkout: ProviderCheckout
        do {
            checkout = try await provider.checkout(CheckoutOrder(topUp: row.id, amount: row.amount, currency: row.currency,
                                                                 description: LocalizedText("topUp.description").render(account.language), returnURL: returnURL))
        } catch let failure as ProviderUnavailable {
            logger.warning("top-up \(row.id.uuidString.lowercased()): \(failure.reason)")
            throw GatehouseError(.unavailable, .paymentProviderUnavailable, LocalizedText("error.paymentProviderUnavailable"))
        }
        try await store.setCheckout(row.id, payment: checkout.id, url: checkout.url, now: clock.now())
        row.payment = checkout.id
        row.confirmationURL = checkout.url
        return (view(row), fresh)
    }

    package func topUp(_ id: UUID, viewer: UUID) async throws -> TopUp {
        guard let row = try await store.topUp(id, of: viewer) else { throw Self.notFound }
        return view(row)
    }

    /// The local provider's payment page (development): the top-up it takes the money for.
    package func localPayment(_ payment: String) async throws -> (row: TopUpRow, provider: LocalPaymentProvider)? {
        guard let local = provider as? LocalPaymentProvider, let row = try await store.topUp(provider: local.name, payment: payment) else { return nil }
        return (row, local)
    }

    // MARK: - the provider's notifications

    /// What a notification came to: the word the provider is answered with.
    package enum Outcome: String, Sendable {
        case credited, alreadyCredited = "already_credited", expired, refunded, alreadyRefunded = "already_refunded"
        /// A refund the wallet no longer holds the money for, or more than was paid: the ledger is not
        /// changed, and the audit trail says so for an operator to settle.
        case refundNotApplied = "refund_not_applied"
        case ignored
    }

    /// A notification as the provider sent it (the raw body and its signature header). Refused
    /// (400 `notification_refused`, and an audit record) when its signature or time is wrong, when
    /// it names a top-up we do not have, or when its amount or currency is not the top-up's.
    package func notify(payload: Data, signature: String?, origin: AuditOrigin) async throws -> Outcome {
        guard let provider else { throw Self.notFound }
        let event: ProviderEvent
        do {
            event = try provider.event(payload: payload, signature: signature, now: clock.now())
        } catch {
            // Anyone can post here: a notification nobody signed is counted per client address and
            // hour (one audit row whose count grows), never a row per post.
            throw try await refuse(error.rawValue, provider: provider, origin: origin, counted: true)
        }
        switch event {
        case .paid(let eventID, let payment, let intent, let topUp, let amount, let currency):
            // A payment without our metadata is someone else's on the same account (another integration).
            guard let topUp else { return .ignored }
            guard let row = try await store.topUp(provider: provider.name, payment: payment), row.id.uuidString.lowercased() == topUp.lowercased() else {
                throw try await refuse("unknown_payment", provider: provider, origin: origin, detail: ["payment": payment, "event": eventID])
            }
            guard row.amount == amount, row.currency.lowercased() == currency?.lowercased() else {
                throw try await refuse("amount_mismatch", provider: provider, account: row.account, origin: origin, detail: [
                    "payment": payment, "event": eventID, "topup": row.id.uuidString.lowercased(),
                    "expected": "\(row.amount) \(row.currency.lowercased())", "received": "\(amount.map(String.init) ?? "none") \(currency ?? "none")",
                ])
            }
            let outcome = try await credit(row, payment: payment, paymentIntent: intent, provider: provider, origin: origin)
            // Paid after its person asked for deletion: the money goes back to the card, once (a
            // retried notification finds what is left to give back).
            if try await directory.store.walletAnyState(row.wallet)?.deleting == true {
                return try await giveBackForDeletion(row.id, paymentIntent: intent, provider: provider, origin: origin)
            }
            return outcome
        case .expired(_, let payment, let topUp):
            guard topUp != nil, let row = try await store.topUp(provider: provider.name, payment: payment) else { return .ignored }
            _ = try await store.markExpired(row.id, now: clock.now())
            return .expired
        case .refunded(let eventID, let refund, let intent, let amount, _):
            // A refund of a payment that is not one of our top-ups is someone else's.
            guard let intent, let row = try await store.topUp(provider: provider.name, paymentIntent: intent) else { return .ignored }
            return try await applyRefund(row, refund: refund, amount: amount, provider: provider, comment: LocalizedText("topUp.refund").render(.en),
                                         actor: .system(provider.name), origin: origin, detail: ["event": eventID])
        case .ignored:
            return .ignored
        }
    }

    /// Credits a paid top-up, once.
    private func credit(_ row: TopUpRow, payment: String, paymentIntent: String?, provider: any PaymentProvider, origin: AuditOrigin) async throws -> Outcome {
        if row.state == .paid { return .alreadyCredited }
        struct AlreadyPaid: Error {}
        let now = clock.now()
        let reference = "\(provider.name):\(payment)"
        do {
            try await events.write { tx, recorder in
                // The first statement writes (on SQLite a transaction that reads first cannot wait
                // for another writer) and decides: a second delivery finds the top-up paid.
                guard try await store.markPaid(row.id, paymentIntent: paymentIntent, now: now, on: tx) else { throw AlreadyPaid() }
                // The wallet whatever its account's state: money the provider took is always credited
                // (and given back at once when the account is being deleted).
                guard let wallet = try await directory.store.walletAnyState(row.wallet, on: tx)?.wallet else {
                    throw GatehouseError.notFound(.walletNotFound, "error.walletNotFound")
                }
                let posting = try await ledger.post(Ledger.Movement(kind: .topup, debit: Ledger.systemWalletID, credit: row.wallet, amount: row.amount,
                                                                         reference: reference), dailyLimit: nil, on: tx)
                try await store.setTransfer(row.id, transfer: posting.id, on: tx)
                let transfer = Transfer(id: posting.id, kind: .topup, from: nil, to: wallet.party, amount: row.amount, comment: nil,
                                        requestId: nil, createdAt: posting.createdAt)
                try recorder.add(.walletTransfer, to: row.account, TransferResult(transfer: transfer, balance: posting.creditBalance), push: true)
                try await audit.record(
                    AuditEvent(.walletCredited, by: .system(provider.name), account: row.account, origin: origin, detail: [
                        "amount_kopecks": String(row.amount), "transfer": posting.id.uuidString.lowercased(), "reference": reference,
                        "topup": row.id.uuidString.lowercased(),
                    ]), on: tx)
            }
            return .credited
        } catch is AlreadyPaid {
            return .alreadyCredited
        } catch where error.isConstraintViolation {
            return .alreadyCredited
        }
    }

    /// Gives a top-up paid after its person asked for deletion back at the provider, for what is
    /// left of it, and moves it out of the wallet (audited as `wallet.refunded`); the provider's
    /// idempotency key makes a retry the same refund. Should the provider be away, the webhook
    /// answers 503 and the provider's retry tries again.
    private func giveBackForDeletion(_ id: UUID, paymentIntent: String?, provider: any PaymentProvider, origin: AuditOrigin) async throws -> Outcome {
        guard let row = try await store.topUp(id: id) else { throw Self.notFound }
        let remaining = row.amount - row.refunded
        guard remaining > 0 else { return .alreadyRefunded }
        guard let intent = paymentIntent ?? row.paymentIntent else {
            try await audit.record(
                AuditEvent(.walletRefundNotApplied, by: .system(provider.name), account: row.account, origin: origin, detail: [
                    "topup": row.id.uuidString.lowercased(), "amount_kopecks": String(remaining),
                    "problem": "paid while the account is being deleted, and the provider named no payment to refund",
                ]))
            return .refundNotApplied
        }
        let refund: ProviderRefund
        do {
            refund = try await provider.refund(paymentIntent: intent, amount: remaining, topUp: row.id, key: "refund-\(row.id.uuidString.lowercased())-deletion")
        } catch let failure as ProviderUnavailable {
            logger.warning("top-up \(row.id.uuidString.lowercased()): paid while its account is being deleted; refund failed: \(failure.reason)")
            throw GatehouseError(.unavailable, .paymentProviderUnavailable, LocalizedText("error.paymentProviderUnavailable"))
        }
        // Accepted, not made yet: the provider's notification of the refund moves the wallet.
        guard refund.succeeded else { return .refunded }
        return try await applyRefund(row, refund: refund.id, amount: refund.amount, provider: provider,
                                     comment: "Paid after the account's deletion was requested: given back", actor: .system(provider.name), origin: origin)
    }

    /// Moves a refund's amount from the person's wallet back to the system wallet, once per
    /// refund and never beyond what was paid.
    private func applyRefund(_ row: TopUpRow, refund: String, amount: Int64, provider: any PaymentProvider, comment: String,
                             actor: AuditActor, origin: AuditOrigin, detail extra: [String: String] = [:]) async throws -> Outcome {
        let reference = "\(provider.name):\(refund)"
        if try await directory.store.reversal(reference: reference) != nil { return .alreadyRefunded }
        struct TooMuch: Error {}
        var detail = extra.merging(["amount_kopecks": String(amount), "topup": row.id.uuidString.lowercased(), "reference": reference]) { a, _ in a }
        do {
            try await events.write { [detail] tx, _ in
                guard try await store.addRefund(row.id, amount: amount, now: clock.now(), on: tx) else { throw TooMuch() }
                let posting = try await ledger.post(Ledger.Movement(kind: .reversal, debit: row.wallet, credit: Ledger.systemWalletID, amount: amount,
                                                                         comment: comment, reference: reference), dailyLimit: nil, on: tx)
                var detail = detail
                detail["reversal"] = posting.id.uuidString.lowercased()
                detail["reason"] = comment
                try await audit.record(
                    AuditEvent(.walletRefunded, by: actor, account: row.account, origin: origin, detail: detail), on: tx)
            }
            return .refunded
        } catch where error.isConstraintViolation {
            return .alreadyRefunded
        } catch let failure where failure is TooMuch || failure is Ledger.Refusal {
            detail["problem"] = failure is TooMuch ? "refund_exceeds_payment" : "insufficient_funds"
            try await audit.record(
                AuditEvent(.walletRefundNotApplied, by: actor, account: row.account, origin: origin, detail: detail))
            logger.warning("top-up \(row.id.uuidString.lowercased()): refund \(refund) not applied to the ledger (\(detail["problem"] ?? ""))")
            return .refundNotApplied
        }
    }

    /// A notification not believed: audited, and answered 400. `counted`: one row per client address
    /// and hour whose count grows (`AuditLog.countFailure`), for what anyone can send.
    private func refuse(_ reason: String, provider: any PaymentProvider, account: UUID? = nil, origin: AuditOrigin,
                        detail: [String: String] = [:], counted: Bool = false) async throws -> GatehouseError {
        let event = AuditEvent(.paymentNotificationRefused, by: .system(provider.name), account: account, origin: origin,
                               detail: detail.merging(["reason": reason]) { a, _ in a })
        if counted { try await audit.countFailure(event, apart: reason) } else { try await audit.record(event) }
        return GatehouseError(.invalidInput, .notificationRefused, LocalizedText("error.plain", ["Notification refused: \(reason)."]))
    }

    // MARK: - the operator

    /// What giving a top-up back came to.
    package enum GiveBack: String, Sendable, Encodable {
        /// A credit made by hand, reversed in the ledger.
        case reversed
        /// Paid through the provider: refunded there and moved out of the wallet.
        case refunded
        /// Given back before: nothing changed.
        case before
        /// The provider accepted the refund and has not made it yet: its notification moves the wallet.
        case pending
    }

    /// ``giveBack(transfer:of:reason:by:origin:)`` for whoever the top-up credited (the command line's `gatehouse wallet refund`).
    package func giveBack(transfer: UUID, reason: String, by actor: AuditActor) async throws -> GiveBack {
        guard let account = try await store.account(ofTopUp: transfer) else { throw GatehouseError.notFound(.transferNotFound, "error.transferNotFound") }
        return try await giveBack(transfer: transfer, of: account, reason: reason, by: actor)
    }

    /// Gives a top-up's money back (an operator's action): a top-up paid through the provider is
    /// refunded there for what is left of it, and the refund moves the ledger (the provider's
    /// notification of it then changes nothing); a credit made by hand is reversed in the ledger
    /// alone (`WalletService.reverse`).
    package func giveBack(transfer: UUID, of account: UUID, reason: String, by actor: AuditActor,
                          origin: AuditOrigin = AuditOrigin()) async throws -> GiveBack {
        guard let row = try await store.topUp(transfer: transfer, of: account) else {
            return try await wallets.reverse(topUp: transfer, of: account, reason: reason, by: actor, origin: origin).repeated ? .before : .reversed
        }
        guard let provider, provider.name == row.provider, let intent = row.paymentIntent else {
            throw GatehouseError(.conflict, .paymentProviderUnavailable,
                                 LocalizedText("error.plain", ["This top-up was paid through \(row.provider), which this server is not configured for."]))
        }
        let comment = try cleanComment(reason) ?? LocalizedText("topUp.refund").render(.en)
        let remaining = row.amount - row.refunded
        guard remaining > 0 else { return .before }
        // Checked before the provider is asked: money the person already spent is not refunded.
        let wallet = try await requireWallet(of: account)
        guard wallet.balance >= remaining else { throw Ledger.error(for: .insufficientFunds) }
        let refund: ProviderRefund
        do {
            refund = try await provider.refund(paymentIntent: intent, amount: remaining, topUp: row.id,
                                               key: "refund-\(row.id.uuidString.lowercased())-\(row.refunded)")
        } catch let failure as ProviderUnavailable {
            logger.warning("top-up \(row.id.uuidString.lowercased()): refund failed: \(failure.reason)")
            throw GatehouseError(.unavailable, .paymentProviderUnavailable, LocalizedText("error.paymentProviderUnavailable"))
        }
        guard refund.succeeded else { return .pending }
        switch try await applyRefund(row, refund: refund.id, amount: refund.amount, provider: provider, comment: comment, actor: actor, origin: origin) {
        case .refundNotApplied:
            throw GatehouseError(.conflict, .insufficientFunds, LocalizedText("error.plain", [
                "The provider refunded \(Kopecks.format(refund.amount, grouping: " ")) ₽, but the wallet no longer holds it: the ledger is unchanged (see the audit trail).",
            ]))
        // Already refunded here means the provider's notification of this very refund came first.
        default: return .refunded
        }
    }
}
