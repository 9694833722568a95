import Foundation
import GatehouseFoundation

/// An identity provider's published keys (Apple's `https://appleid.apple.com/auth/keys`, Google's
/// `https://www.googleapis.com/oauth2/v3/certs`), fetched when first needed and kept as the answer's `Cache-Control:
/// max-age` says (by default at least a minute, at most a day; an hour when it says nothing:
/// `GatehouseConfiguration.IdentityProviders`). A token whose `kid` the kept set lacks (the provider rotated) fetches
/// again — at most once a minute by default, so tokens with made-up `kid`s cannot make Gatehouse fetch on every
/// request. A fetch that fails keeps the keys it had (a provider away for a while does not stop sign-ins with tokens
/// of known keys) and is tried again after the same interval. Callers waiting at the same moment
/// share one fetch. docs/social-login.md, "Threat model".
package actor ProviderKeys {
    /// The key set's document and its `max-age` in seconds (nil: none given).
    package typealias Fetch = @Sendable (_ url: String) async throws -> (body: [UInt8], maxAge: TimeInterval?)

    package let url: String
    private let settings: GatehouseConfiguration.IdentityProviders
    private let fetch: Fetch
    private let clock: GatehouseClock
    private var keys = JWS.RSAKeySet()
    private var expires = Date.distantPast
    private var fetched = Date.distantPast
    private var inFlight: Task<Void, Never>?
    /// How many times the set was fetched (for the tests and the metrics).
    package private(set) var fetches = 0

    package init(url: String, settings: GatehouseConfiguration.IdentityProviders, clock: GatehouseClock, fetch: @escaping Fetch) {
        self.url = url
        self.settings = settings
        self.clock = clock
        self.fetch = fetch
    }

    /// The keys to verify a token signed by `keyID` with: the kept set, fetched again first when it has expired, or
    /// when it lacks `keyID` and the last fetch is a minute old.
    package func keys(for keyID: String) async -> JWS.RSAKeySet {
        let now = clock.now()
        let due = now >= expires || (!keys.has(keyID) && now.timeIntervalSince(fetched) >= settings.keysRefetchInterval)
        if due {
            if let inFlight {
                await inFlight.value
            } else {
                let task = Task { await self.refresh() }
                inFlight = task
                await task.value
                inFlight = nil
            }
        }
        return keys
    }

    private func refresh() async {
        let now = clock.now()
        fetched = now
        fetches += 1
        do {
            let (body, maxAge) = try await fetch(url)
            guard let set = JWS.RSAKeySet(jwks: body), !set.isEmpty else { throw ProviderKeysUnreadable() }
            keys = set
            expires = now.addingTimeInterval(min(max(maxAge ?? settings.keysUnsaidAge, settings.keysLeastAge), settings.keysMostAge))
        } catch {
            // Keep what we had; try again after the refetch interval.
            expires = now.addingTimeInterval(settings.keysRefetchInterval)
        }
    }

    /// `Cache-Control`'s `max-age`, in seconds.
    package static func maxAge(cacheControl: String?) -> TimeInterval? {
        guard let cacheControl else { return nil }
        for directive in cacheControl.split(separator: ",") {
            let parts = directive.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if parts.count == 2, parts[0].lowercased() == "max-age", let seconds = TimeInterval(parts[1]) { return seconds }
        }
        return nil
    }
}

struct ProviderKeysUnreadable: Error {}
