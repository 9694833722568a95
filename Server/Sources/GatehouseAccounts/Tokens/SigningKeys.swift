import Crypto
import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import NIOConcurrencyHelpers

/// The keys that sign the tokens other services verify (docs/oidc.md, "Keys"): ES256, made by the server, the
/// private half sealed with a key derived from `GATEHOUSE_SECRET`.
///
/// A key is published (in the key set, `/.well-known/jwks.json`) from the moment it is made, and signs from one
/// access-token lifetime later, so that every cache of the key set has it before a token it signed arrives; the key
/// before it retires when it starts signing (its private half emptied) and stays published until every token it
/// signed has expired. The first key of a server signs at once (nothing could have cached an empty set usefully).
/// A key whose private half cannot be opened (sealed under another `GATEHOUSE_SECRET`) never signs here: an instance
/// with no key it can open makes one, and retires the unopenable keys older than it. Instances share the table: each reads it again every `refresh` seconds, well within the
/// pre-publication delay.
package final class SigningKeys: Sendable {
    package struct Settings: Sendable {
        /// The longest lifetime of a token these keys sign (an access token, an ID token).
        package var tokenLifetime: TimeInterval
        /// A key signs this long before the schedule makes the next one.
        package var keyLifetime: TimeInterval
        /// How often an instance reads the keys again.
        package var refresh: TimeInterval = 30

        package init(tokenLifetime: TimeInterval, keyLifetime: TimeInterval) {
            self.tokenLifetime = tokenLifetime
            self.keyLifetime = keyLifetime
        }
    }

    /// A key as the verifier sees it. (swift-crypto's keys are immutable values it has not marked `Sendable`.)
    package struct Published: @unchecked Sendable {
        package var id: String
        package var key: P256.Signing.PublicKey
    }

    private struct Loaded: @unchecked Sendable {
        var signer: (id: String, key: P256.Signing.PrivateKey, since: Date)?
        var published: [Published]
        var at: Date
        /// When the next key starts signing, if one waits: the keys are read again then, not a refresh later.
        var nextSigns: Date?
    }

    private let store: SigningKeyStore
    private let clock: GatehouseClock
    private let secrets: Secrets
    private let audit: AuditLog
    private let settings: Settings
    private let loaded = NIOLockedValueBox<Loaded?>(nil)
    /// Purpose of the sealing key (`Secrets.sealingKey`).
    static let purpose = "signing key"

    package init(database: DatabaseProvider, clock: GatehouseClock, secrets: Secrets, audit: AuditLog, settings: Settings) {
        self.store = SigningKeyStore(database: database)
        self.clock = clock
        self.secrets = secrets
        self.audit = audit
        self.settings = settings
    }

    /// The key that signs now, and its id; the first one is made on first use.
    package func signer() async throws -> (id: String, key: P256.Signing.PrivateKey) {
        if let signer = try await current().signer { return (signer.id, signer.key) }
        // Signing from a second ago: a date read back from the database may be a hair later than the one written.
        _ = try await make(signsFrom: clock.now().addingTimeInterval(-1), by: .system(nil), reason: "first key")
        guard let signer = try await load().signer else { throw GatehouseError(.internal, .internalError, LocalizedText("error.internal")) }
        return (signer.id, signer.key)
    }

    /// The published key named `id`; an unknown id reads the table again (at most once a second), so a key
    /// another instance made is found.
    package func verifier(_ id: String) async throws -> P256.Signing.PublicKey? {
        let keys = try await current()
        if let found = keys.published.first(where: { $0.id == id }) { return found.key }
        guard clock.now().timeIntervalSince(keys.at) >= 1 else { return nil }
        return try await load().published.first { $0.id == id }?.key
    }

    /// Every published key.
    package func published() async throws -> [Published] {
        try await current().published
    }

    /// Every key still published or waiting to sign, the oldest first (`gatehouse keys list`).
    package func rows() async throws -> [SigningKeyRow] {
        try await store.live(at: clock.now())
    }

    /// The key set as `/.well-known/jwks.json` serves it (RFC 7517 §5).
    package func keySet() async throws -> JSONValue {
        .object(["keys": .array(try await published().map { JWS.jwk($0.key, keyID: $0.id) })])
    }

    /// Makes the next key (`gatehouse keys rotate`, or the schedule): published now, signing after one token
    /// lifetime, when the current one retires. Its id.
    @discardableResult
    package func rotate(by actor: AuditActor, reason: String) async throws -> String {
        try await make(signsFrom: clock.now().addingTimeInterval(settings.tokenLifetime), by: actor, reason: reason)
    }

    /// The schedule: the next key once the signing one has signed for `keyLifetime` and none waits.
    package func rotateIfDue() async throws {
        let keys = try await load()
        let now = clock.now()
        guard let signer = keys.signer, now.timeIntervalSince(signer.since) >= settings.keyLifetime else { return }
        let waiting = try await store.live(at: now).contains { $0.signsFrom > now && $0.retiredAt == nil }
        if !waiting { try await rotate(by: .system(nil), reason: "schedule") }
    }

    // MARK: Loading

    private func current() async throws -> Loaded {
        let now = clock.now()
        if let loaded = loaded.withLockedValue({ $0 }), now.timeIntervalSince(loaded.at) < settings.refresh, loaded.nextSigns.map({ now < $0 }) ?? true {
            return loaded
        }
        return try await load()
    }

    /// Reads the keys, retires those a newer signing key replaced (or that cannot be opened), and keeps the result.
    @discardableResult
    private func load() async throws -> Loaded {
        let now = clock.now()
        let rows = try await store.live(at: now)
        // The signer: the newest key whose time has come and whose private half opens.
        var signer: (id: String, key: P256.Signing.PrivateKey, since: Date)?
        for row in rows.reversed() where row.signsFrom <= now && row.retiredAt == nil {
            if let key = try? open(row) {
                signer = (row.id, key, row.signsFrom)
                break
            }
        }
        // Every other key that has signed, or could have, retires as the signer starts — but a key this instance cannot
        // open only when it is older than the signer: during a rolling change of `GATEHOUSE_SECRET` the instances
        // with the other secret sign with a newer key this one must leave alone.
        if let signer {
            for row in rows where row.retiredAt == nil && row.signsFrom <= now && row.id != signer.id {
                guard (try? open(row)) != nil || row.signsFrom < signer.since else { continue }
                let retiredAt = max(row.signsFrom, signer.since)
                try await store.retire(row.id, at: retiredAt, publishedUntil: retiredAt.addingTimeInterval(settings.tokenLifetime + 60))
            }
        }
        var published: [Published] = []
        for row in rows {
            if let bytes = Data(base64Encoded: row.publicKey), let key = try? P256.Signing.PublicKey(x963Representation: bytes) {
                published.append(Published(id: row.id, key: key))
            }
        }
        let nextSigns = rows.filter { $0.retiredAt == nil && $0.signsFrom > now }.map(\.signsFrom).min()
        let result = Loaded(signer: signer, published: published, at: now, nextSigns: nextSigns)
        loaded.withLockedValue { $0 = result }
        return result
    }

    private func open(_ row: SigningKeyRow) throws -> P256.Signing.PrivateKey {
        try P256.Signing.PrivateKey(rawRepresentation: try secrets.open(row.sealedPrivateKey, purpose: Self.purpose))
    }

    private func make(signsFrom: Date, by actor: AuditActor, reason: String) async throws -> String {
        let key = P256.Signing.PrivateKey()
        let id = String(secrets.token().prefix(22))
        let row = SigningKeyRow(id: id, publicKey: key.publicKey.x963Representation.base64EncodedString(),
                                sealedPrivateKey: try secrets.seal(Array(key.rawRepresentation), purpose: Self.purpose),
                                createdAt: clock.now(), signsFrom: signsFrom)
        try await store.insert(row)
        try await audit.record(AuditEvent(.signingKeyMade, by: actor, account: nil, detail: ["kid": id, "reason": reason,
                                                                                             "signs_from": WireDates.iso8601String(from: signsFrom)]))
        try await load()
        return id
    }
}
