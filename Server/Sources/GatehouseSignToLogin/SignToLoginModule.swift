import Foundation
import GatehouseAccounts
import GatehouseFoundation
import GatehousePlatform

/// Sign To Login, built from the platform and account pieces it uses (docs/architecture.md, "A
/// new app"): each of its services is given what it uses and nothing else, and the composition
/// root wires the module, not its services one by one.
package struct SignToLoginModule: Sendable {
    /// Developers' apps and their keys.
    package let apps: AppsService
    /// Signing up, logging in and authenticating by signature.
    package let signatures: SignatureService
    /// The person's Sign To Login profile: read, edit, delete, and the site's page.
    package let profiles: SignatureProfiles
    /// Signed documents and their history.
    package let documents: SignatureDocuments
    /// Its queries (its part in deleting an account uses them).
    package let store: SignToLoginStore
    /// The app copies' subscription to the bus (`SignToLoginStore.follow`), nil without a bus.
    package let appChanges: BusSubscription?

    package static func make(database: DatabaseProvider, clock: GatehouseClock, settings: GatehouseConfiguration.Signature,
                             limits: GatehouseConfiguration.Limits, publicURL: String, hasher: PasswordHasher, sessions: SessionService,
                             verification: VerificationService, composer: MessageComposer, secrets: Secrets, rateLimiter: RateLimiter,
                             blobs: any BlobStore, codes: CodeIssuer, proofs: AddressProofs, audit: AuditLog,
                             bus: (any EventBus)? = nil) -> SignToLoginModule {
        let store = SignToLoginStore(database: database, appCacheTTL: settings.appCacheTTL, bus: bus)
        let signatures = SignatureService(database: database, records: store, clock: clock, settings: settings, limits: limits, hasher: hasher,
                                          sessions: sessions, verification: verification, composer: composer, secrets: secrets,
                                          rateLimiter: rateLimiter, blobs: blobs, codes: codes, proofs: proofs, audit: audit)
        return SignToLoginModule(
            apps: AppsService(apps: store, clock: clock, settings: settings, publicURL: publicURL, secrets: secrets, blobs: blobs),
            signatures: signatures,
            profiles: SignatureProfiles(database: database, records: store, verification: verification, sessions: sessions, composer: composer,
                                        clock: clock, blobs: blobs, photoMaxBytes: settings.photoMaxBytes, codeTTL: limits.codeTTL,
                                        publicURL: publicURL, codes: codes, audit: audit),
            documents: SignatureDocuments(database: database, records: store, clock: clock, warnBelow: settings.warnBelow, signFloor: settings.signFloor,
                                          publicURL: publicURL,
                                          sessions: sessions, blobs: blobs, signatures: signatures),
            store: store,
            appChanges: bus.map(store.follow))
    }
}
