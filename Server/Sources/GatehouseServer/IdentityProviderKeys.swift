import AsyncHTTPClient
import Foundation
import NIOCore
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation

/// The identity providers' verifiers, each with its key set fetched over HTTPS from where the provider publishes it
/// (Apple: `<GATEHOUSE_APPLE_URL>/auth/keys`; Google: `GATEHOUSE_GOOGLE_KEYS_URL`). A provider without client ids is
/// off and has none.
enum IdentityProviderKeys {
    /// The most a key set's answer may be: the providers' are a few kilobytes.
    static let maxBytes = 256 * 1024

    static func verifiers(_ settings: GatehouseConfiguration.IdentityProviders, httpClient: HTTPClient,
                          clock: GatehouseClock) -> [IdentityProvider: IdentityTokenVerifier] {
        let fetch = fetcher(httpClient)
        var verifiers: [IdentityProvider: IdentityTokenVerifier] = [:]
        for (provider, ids, url) in [(IdentityProvider.apple, settings.apple.clientIDs, settings.apple.url + "/auth/keys"),
                                     (.google, settings.google.clientIDs, settings.google.keysURL)] where !ids.isEmpty {
            let keys = ProviderKeys(url: url, settings: settings, clock: clock, fetch: fetch)
            verifiers[provider] = IdentityTokenVerifier(provider: provider, audiences: Set(ids), keys: keys, skew: settings.skew, clock: clock)
        }
        return verifiers
    }

    /// A GET of the key set: its body (at most `maxBytes`) and its `Cache-Control: max-age`; anything but a 200 fails.
    static func fetcher(_ httpClient: HTTPClient) -> ProviderKeys.Fetch {
        { url in
            var request = HTTPClientRequest(url: url)
            request.headers.add(name: "Accept", value: "application/json")
            let response = try await httpClient.execute(request, timeout: .seconds(10))
            guard response.status == .ok else { throw ProviderKeysFetchFailed(status: Int(response.status.code)) }
            let body = try await response.body.collect(upTo: maxBytes)
            return (Array(body.readableBytesView), ProviderKeys.maxAge(cacheControl: response.headers.first(name: "Cache-Control")))
        }
    }
}

extension IdentityProviderKeys {
    /// A form POST to Apple (`application/x-www-form-urlencoded`): its status and body (at most `maxBytes`).
    static func poster(_ httpClient: HTTPClient) -> AppleEndpoints.Post {
        { url, form in
            var request = HTTPClientRequest(url: url)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            request.headers.add(name: "Accept", value: "application/json")
            request.body = .bytes(ByteBuffer(string: FormURLEncoding.encode(form)))
            let response = try await httpClient.execute(request, timeout: .seconds(10))
            let body = try await response.body.collect(upTo: maxBytes)
            return (Int(response.status.code), Array(body.readableBytesView))
        }
    }
}

struct ProviderKeysFetchFailed: Error {
    var status: Int
}
