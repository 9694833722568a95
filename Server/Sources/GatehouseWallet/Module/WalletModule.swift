import Foundation
import GatehouseAccounts
import GatehouseFoundation
import GatehouseMessenger
import GatehousePlatform
import Logging

/// The wallet, built from the platform pieces it uses (docs/architecture.md, "A new app"): each of
/// its services is given what it uses and nothing else, and the composition root wires the
/// module, not its services one by one.
package struct WalletModule: Sendable {
    package let wallets: WalletService
    package let moneyRequests: MoneyRequestsService
    package let topUps: TopUpService
    /// Its queries (its part in deleting an account uses them).
    package let store: WalletStore
    /// The Idempotency-Keys its money moves under (their expired rows are purged with the rest).
    package let keys: IdempotencyKeys

    /// `payments`: how a payment shows in a chat (the messenger's `PaymentMessages`); `provider`:
    /// where top-ups are paid, nil when they are off.
    package static func make(database: DatabaseProvider, clock: GatehouseClock, settings: GatehouseConfiguration.Wallet, publicURL: String,
                             defaultCountryCode: String, rateLimiter: RateLimiter, events: EventLog, audit: AuditLog, payments: PaymentMessages,
                             provider: (any PaymentProvider)?, logger: Logger) -> WalletModule {
        let store = WalletStore(database: database, publicURL: publicURL)
        let directory = WalletDirectory(store: store, defaultCountryCode: defaultCountryCode)
        let keys = IdempotencyKeys(clock: clock, ttl: settings.idempotencyKeyTTL)
        let writes = IdempotentWrites(events: events, keys: keys)
        let ledger = Ledger(clock: clock)
        let wallets = WalletService(database: database, clock: clock, settings: settings, rateLimiter: rateLimiter, events: events, ledger: ledger,
                                    dialogs: payments, directory: directory, writes: writes, audit: audit, topUpsOn: provider != nil)
        return WalletModule(
            wallets: wallets,
            moneyRequests: MoneyRequestsService(clock: clock, settings: settings, rateLimiter: rateLimiter, dialogs: payments, directory: directory,
                                                writes: writes, wallets: wallets),
            topUps: TopUpService(database: database, clock: clock, settings: settings, publicURL: publicURL, rateLimiter: rateLimiter, events: events,
                                 ledger: ledger, audit: audit, directory: directory, provider: provider, wallets: wallets, logger: logger),
            store: store, keys: keys)
    }
}
