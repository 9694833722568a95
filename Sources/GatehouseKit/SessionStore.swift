import Foundation

/// A logged-in session as the app keeps it: the bearer token and when it expires, and, with signed tokens
/// (``GatehouseClient/tokens``), the refresh token that renews it.
public struct GatehouseSession: Codable, Sendable, Equatable {
    /// The bearer token: the session's opaque token, or a signed access token.
    public var token: String
    /// When the server stops accepting the token.
    public var expiresAt: Date
    /// With signed tokens: what renews `token` (once; the client keeps the next one).
    public var refreshToken: String?

    /// Creates a session value.
    public init(token: String, expiresAt: Date, refreshToken: String? = nil) {
        self.token = token
        self.expiresAt = expiresAt
        self.refreshToken = refreshToken
    }

    /// Whether the session can still be used at `date`: its token has not expired, or a refresh token can renew it.
    public func isValid(at date: Date) -> Bool { expiresAt > date || refreshToken != nil }

    /// Whether the token should be renewed before a call at `date` (it ends within `margin` and can be renewed).
    public func needsRefresh(at date: Date, margin: TimeInterval = 30) -> Bool {
        refreshToken != nil && expiresAt <= date.addingTimeInterval(margin)
    }
}

/// Where the SDK keeps the session between launches.
public protocol SessionStore: Sendable {
    /// The stored session, if any.
    func load() throws -> GatehouseSession?
    /// Replaces the stored session.
    func save(_ session: GatehouseSession) throws
    /// Forgets the session.
    func clear() throws
}

extension SessionStore {
    /// The launch rule of every client: the stored session if it is still valid at `date`;
    /// an expired one is forgotten.
    public func restoreValid(at date: Date) -> GatehouseSession? {
        guard let stored = try? load() else { return nil }
        if stored.isValid(at: date) { return stored }
        try? clear()
        return nil
    }

    /// The stored session if it is still valid at `date`; unlike ``restoreValid(at:)`` it
    /// forgets nothing (each client's `session`).
    func validSession(at date: Date) -> GatehouseSession? {
        guard let session = try? load(), session.isValid(at: date) else { return nil }
        return session
    }
}

/// Keeps the session in memory only (tests, previews, apps that never persist a login).
public final class InMemorySessionStore: SessionStore, @unchecked Sendable {
    private let lock = NSLock()
    private var session: GatehouseSession?

    /// Creates an empty store, or one holding `session`.
    public init(_ session: GatehouseSession? = nil) { self.session = session }

    /// The stored session, if any (see ``SessionStore``).
    public func load() throws -> GatehouseSession? { lock.withLock { session } }
    /// Replaces the stored session (see ``SessionStore``).
    public func save(_ session: GatehouseSession) throws { lock.withLock { self.session = session } }
    /// Forgets the session (see ``SessionStore``).
    public func clear() throws { lock.withLock { session = nil } }
}

/// Keeps the session in a file readable by the owner only (mode 0600), written atomically:
/// the session storage on Linux, where there is no Keychain.
public struct FileSessionStore: SessionStore {
    /// The file's location.
    public let url: URL

    /// A store in the file at `url` (written `0600`).
    ///
    /// - Parameter url: the file to use; its directory is created when missing.
    public init(url: URL) { self.url = url }

    /// The stored session, if any (see ``SessionStore``).
    public func load() throws -> GatehouseSession? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        let data = try Data(contentsOf: url)
        return try? JSONDecoder.gatehouse.decode(GatehouseSession.self, from: data)
    }

    /// Replaces the stored session (see ``SessionStore``).
    public func save(_ session: GatehouseSession) throws {
        let directory = url.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let data = try JSONEncoder.gatehouse.encode(session)
        // Write a 0600 temporary file next to the target, then rename: readers see the old or the
        // new session, never half of one, and the token is never world-readable.
        let temporary = directory.appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).tmp")
        guard FileManager.default.createFile(atPath: temporary.path, contents: data, attributes: [.posixPermissions: 0o600]) else {
            throw CocoaError(.fileWriteUnknown)
        }
        if rename(temporary.path, url.path) != 0 {
            try? FileManager.default.removeItem(at: temporary)
            throw CocoaError(.fileWriteUnknown)
        }
    }

    /// Forgets the session (see ``SessionStore``).
    public func clear() throws {
        if FileManager.default.fileExists(atPath: url.path) { try FileManager.default.removeItem(at: url) }
    }
}

#if canImport(Security)
import Security

/// Keeps the session in the Keychain (Apple platforms), available after first unlock and
/// never synced to other devices.
public struct KeychainSessionStore: SessionStore {
    /// The Keychain service name.
    public let service: String
    /// The Keychain account name.
    public let account: String

    /// - Parameters:
    ///   - service: usually the app's bundle identifier.
    ///   - account: a name for this session slot.
    public init(service: String, account: String = "gatehouse-session") {
        self.service = service
        self.account = account
    }

    private var query: [String: Any] {
        [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account]
    }

    /// The stored session, if any (see ``SessionStore``).
    public func load() throws -> GatehouseSession? {
        var item: CFTypeRef?
        var q = query
        q[kSecReturnData as String] = true
        q[kSecMatchLimit as String] = kSecMatchLimitOne
        let status = SecItemCopyMatching(q as CFDictionary, &item)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess, let data = item as? Data else { throw NSError(domain: NSOSStatusErrorDomain, code: Int(status)) }
        return try? JSONDecoder.gatehouse.decode(GatehouseSession.self, from: data)
    }

    /// Replaces the stored session (see ``SessionStore``).
    public func save(_ session: GatehouseSession) throws {
        let data = try JSONEncoder.gatehouse.encode(session)
        let attributes: [String: Any] = [kSecValueData as String: data, kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly]
        var status = SecItemUpdate(query as CFDictionary, attributes as CFDictionary)
        if status == errSecItemNotFound {
            status = SecItemAdd(query.merging(attributes) { $1 } as CFDictionary, nil)
        }
        guard status == errSecSuccess else { throw NSError(domain: NSOSStatusErrorDomain, code: Int(status)) }
    }

    /// Forgets the session (see ``SessionStore``).
    public func clear() throws {
        let status = SecItemDelete(query as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw NSError(domain: NSOSStatusErrorDomain, code: Int(status)) }
    }
}
#endif

extension JSONEncoder {
    static var gatehouse: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }
}

extension JSONDecoder {
    static var gatehouse: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}

/// The session store the platform offers: Keychain on Apple platforms, a 0600 file in the
/// user's application-support directory elsewhere.
public enum DefaultSessionStore {
    /// The platform's store for the app `name`.
    ///
    /// - Parameter name: the app's identifier, used as Keychain service or file name.
    public static func make(name: String) -> any SessionStore {
        #if canImport(Security)
        return KeychainSessionStore(service: name)
        #else
        let base = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
            ?? URL(fileURLWithPath: NSHomeDirectory()).appendingPathComponent(".local/share")
        return FileSessionStore(url: base.appendingPathComponent(name).appendingPathComponent("session.json"))
        #endif
    }
}
