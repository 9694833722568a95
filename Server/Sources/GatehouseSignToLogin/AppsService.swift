import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform

/// An app as the service hands it to surfaces: the row's values, without its key's hash.
package struct AppRecord: Sendable, Equatable {
    package var id: UUID
    package var ownerID: UUID?
    package var name: String
    package var bundleID: String
    package var email: String
    package var website: String?
    /// The icon's blob, when it has one (its URL carries the key's start, so caches see a new icon).
    package var iconBlobKey: String?
    package var enabled: Bool
    package var keyHint: String
    package var createdAt: Date
    package var updatedAt: Date
    /// The app's own acceptance threshold, at or above the server's.
    package var minSimilarity: Double?

    init(id: UUID, ownerID: UUID?, name: String, bundleID: String, email: String, website: String?, iconBlobKey: String?, enabled: Bool,
         keyHint: String, createdAt: Date, updatedAt: Date, minSimilarity: Double?) {
        self.id = id
        self.ownerID = ownerID
        self.name = name
        self.bundleID = bundleID
        self.email = email
        self.website = website
        self.iconBlobKey = iconBlobKey
        self.enabled = enabled
        self.keyHint = keyHint
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.minSimilarity = minSimilarity
    }

    init(_ row: AppModel) {
        self.init(id: row.id!, ownerID: row.ownerID, name: row.name, bundleID: row.bundleID, email: row.email, website: row.website,
                  iconBlobKey: row.iconBlobKey, enabled: row.enabled, keyHint: row.keyHint, createdAt: row.createdAt, updatedAt: row.updatedAt,
                  minSimilarity: row.minSimilarity)
    }
}

/// The developers' apps of the Sign To Login service and their API keys: registered by an
/// account (`/v1/apps`, the console) or by an operator (`gatehouse apps`). A key is 256 random
/// bits, shown once, stored as its SHA-256 (like session tokens), rotatable; a disabled app's key
/// is refused like an unknown one.
package struct AppsService: Sendable {
    package let apps: SignToLoginStore
    package let clock: GatehouseClock
    package let settings: GatehouseConfiguration.Signature
    /// Where the server is reached (`GATEHOUSE_PUBLIC_URL`): an icon's address starts with it.
    package let publicURL: String
    package let secrets: Secrets
    package let blobs: any BlobStore

    /// The prefix of every key (so that secret scanners and people can tell what it is).
    package static let keyPrefix = "stl_"

    /// A value of `DeveloperApp` for a row.
    package func view(_ row: AppRecord) -> DeveloperApp {
        let icon = row.iconBlobKey.map { key -> String in
            publicURL + V1.Apps.icon.path(id: row.id) + "?v=" + String(key.prefix(12))
        }
        return DeveloperApp(id: row.id, name: row.name, bundleId: row.bundleID, email: row.email, website: row.website, iconUrl: icon,
                            enabled: row.enabled, keyHint: row.keyHint, createdAt: row.createdAt, updatedAt: row.updatedAt,
                            minSimilarity: row.minSimilarity)
    }

    // MARK: Reading

    /// The apps `owner` registered (every app when nil: the operator's list), newest first.
    package func list(owner: UUID?) async throws -> [AppRecord] {
        try await apps.apps(owner: owner).map(AppRecord.init)
    }

    /// An app of `owner`'s (any app when nil); another's is `app_not_found`, as one that does not exist.
    package func app(_ id: UUID, owner: UUID?) async throws -> AppRecord {
        AppRecord(try await row(id, owner: owner))
    }

    private func row(_ id: UUID, owner: UUID?) async throws -> AppModel {
        guard let row = try await apps.app(id: id), owner == nil || row.ownerID == owner else { throw Self.notFound }
        return row
    }

    /// The enabled app a key belongs to, or nil (unknown, rotated away, or disabled).
    package func enabledApp(key: String) async throws -> AppRecord? {
        guard key.hasPrefix(Self.keyPrefix), key.utf8.count <= 128 else { return nil }
        return try await apps.enabledApp(keyHash: Secrets.sha256Hex(key))
    }

    /// An operator's way to name an app: its id, or its key.
    package func find(idOrKey: String) async throws -> AppRecord {
        if let id = UUID(uuidString: idOrKey) { return try await app(id, owner: nil) }
        guard idOrKey.hasPrefix(Self.keyPrefix),
              let row = try await apps.app(keyHash: Secrets.sha256Hex(idOrKey)) else { throw Self.notFound }
        return AppRecord(row)
    }

    // MARK: Changing

    /// The five fields of a new app, checked.
    package struct Fields {
        package var name: String
        package var bundleID: String
        package var email: String
        package var website: String?
    }

    /// Registers an app; its key, to show once.
    package func create(_ fields: NewApp, owner: UUID?, by actor: AuditActor) async throws -> (AppRecord, key: String) {
        let checked = try check(fields)
        if let owner {
            let count = try await apps.appCount(owner: owner)
            guard count < settings.appsPerAccount else {
                throw GatehouseError.conflict(.tooManyApps, "error.tooManyApps", String(settings.appsPerAccount))
            }
        }
        let key = newKey()
        let now = clock.now()
        let row = AppModel()
        row.id = UUID()
        row.ownerID = owner
        row.name = checked.name
        row.bundleID = checked.bundleID
        row.email = checked.email
        row.website = checked.website
        row.enabled = true
        row.keyHash = Secrets.sha256Hex(key)
        row.keyHint = Self.hint(key)
        row.createdAt = now
        row.updatedAt = now
        try await apps.create(row, audit: AuditEvent(.appCreated, by: actor, account: owner, detail: ["app": row.id!.uuidString.lowercased(),
                                                                                                  "name": row.name]), clock: clock)
        return (AppRecord(row), key)
    }

    /// Changes details, or disables and enables.
    package func update(_ app: AppRecord, _ change: AppUpdate, by actor: AuditActor) async throws -> AppRecord {
        let row = try await row(app.id, owner: nil)
        let checked = try check(NewApp(name: change.name ?? row.name, bundleId: row.bundleID, email: change.email ?? row.email,
                                       website: change.website ?? row.website))
        row.name = checked.name
        row.email = checked.email
        row.website = checked.website
        if let enabled = change.enabled { row.enabled = enabled }
        if let threshold = change.minSimilarity {
            guard threshold.isFinite, threshold >= settings.acceptAt, threshold <= 1 else {
                throw GatehouseError.invalid(.invalidParameter, "error.invalidQueryParameter", "minSimilarity",
                                             "\(settings.acceptAt)–1").on(field: "minSimilarity")
            }
            row.minSimilarity = threshold
        }
        row.updatedAt = clock.now()
        let event: AuditEvent? = switch (app.enabled, row.enabled) {
        case (true, false): AuditEvent(.appDisabled, by: actor, account: row.ownerID, detail: ["app": app.id.uuidString.lowercased()])
        case (false, true): AuditEvent(.appEnabled, by: actor, account: row.ownerID, detail: ["app": app.id.uuidString.lowercased()])
        default: nil
        }
        try await apps.update(row, audit: event, clock: clock)
        return AppRecord(row)
    }

    /// A new key; the old one stops working in the same write.
    package func rotateKey(_ app: AppRecord, by actor: AuditActor) async throws -> (AppRecord, key: String) {
        let row = try await row(app.id, owner: nil)
        let key = newKey()
        row.keyHash = Secrets.sha256Hex(key)
        row.keyHint = Self.hint(key)
        row.updatedAt = clock.now()
        try await apps.update(row, audit: AuditEvent(.appKeyRotated, by: actor, account: row.ownerID, detail: ["app": app.id.uuidString.lowercased()]),
                              clock: clock)
        return (AppRecord(row), key)
    }

    /// Sets the icon: an image checked to its end (PNG, JPEG, WebP), its bytes in the blob store
    /// before the row names them; the old icon's blob is left to the collector.
    package func setIcon(_ app: AppRecord, contentType: String?, bytes: Data) async throws -> AppRecord {
        let format = try checkIcon(contentType: contentType, bytes: bytes)
        let blob = try await blobs.put(bytes)
        let row = try await row(app.id, owner: nil)
        row.iconBlobKey = blob.hex
        row.iconContentType = format.rawValue
        row.updatedAt = clock.now()
        try await apps.update(row, clock: clock)
        return AppRecord(row)
    }

    /// The icon's format, when the bytes are a whole image of the declared type within the limit.
    @discardableResult
    package func checkIcon(contentType: String?, bytes: Data) throws -> ImageFormat {
        let type = (contentType ?? "").split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        guard let format = ImageFormat(rawValue: type) else {
            throw GatehouseError(.unsupportedMediaType, .unsupportedMediaType,
                                 LocalizedText("error.unsupportedMediaType", [String(type.prefix(60)), ImageFormat.allowedList]))
        }
        guard !bytes.isEmpty else { throw GatehouseError.invalid(.invalidImage, "error.emptyImage") }
        guard bytes.count <= settings.appIconMaxBytes else { throw GatehouseError.bodyTooLarge(settings.appIconMaxBytes) }
        guard format.matches(bytes), ImageStructure.isComplete(bytes, format: format) else {
            throw GatehouseError.invalid(.invalidImage, "error.invalidImage", format.rawValue)
        }
        return format
    }

    /// An app's icon: its type and bytes, or nil.
    package func icon(appID: UUID) async throws -> (contentType: String, bytes: Data, etag: String)? {
        guard let row = try await apps.app(id: appID), let hex = row.iconBlobKey, let type = row.iconContentType,
              let key = BlobKey(hex: hex) else { return nil }
        guard let bytes = try await blobs.get(key) else {
            apps.database.logger.error("app icon blob missing from the blob store", metadata: ["app": "\(appID)", "blob": "\(hex)"])
            return nil
        }
        return (type, bytes, hex)
    }

    // MARK: Rules

    package static var notFound: GatehouseError { .notFound(.appNotFound, "error.appNotFound") }

    /// 256 random bits, base64url, after the prefix.
    private func newKey() -> String { Self.keyPrefix + secrets.token() }

    package static func hint(_ key: String) -> String { String(key.prefix(keyPrefix.count + 6)) + "…" }

    /// Trims and checks the fields: a name of 1–100 characters, a reverse-DNS bundle ID, an
    /// email address, an http(s) website or none.
    package func check(_ fields: NewApp) throws -> Fields {
        let name = fields.name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty else { throw GatehouseError.invalid(.missingParameter, "error.missingParameter", "name").on(field: "name") }
        guard name.count <= 100, !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw GatehouseError.invalid(.fieldTooLong, "error.fieldTooLong", "name", "100").on(field: "name")
        }
        let bundle = fields.bundleId.trimmingCharacters(in: .whitespacesAndNewlines)
        guard Self.isBundleID(bundle) else {
            throw GatehouseError.invalid(.invalidBundleId, "error.invalidBundleId", String(bundle.prefix(60))).on(field: "bundleId")
        }
        guard let email = EmailAddress.normalize(fields.email) else {
            throw GatehouseError.invalid(.invalidEmail, "error.invalidEmail", String(fields.email.prefix(60))).on(field: "email")
        }
        var website: String?
        if let raw = fields.website?.trimmingCharacters(in: .whitespacesAndNewlines), !raw.isEmpty {
            guard raw.count <= 2_000, let url = URL(string: raw), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
                  let host = url.host, !host.isEmpty else {
                throw GatehouseError.invalid(.invalidURL, "error.invalidURL", String(raw.prefix(60))).on(field: "website")
            }
            website = raw
        }
        return Fields(name: name, bundleID: bundle, email: email, website: website)
    }

    /// Apple's rule: letters, digits, hyphens and dots, at least two parts, at most 155 characters.
    package static func isBundleID(_ text: String) -> Bool {
        guard (3...155).contains(text.count) else { return false }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count >= 2 && parts.allSatisfy { part in
            !part.isEmpty && part.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
        }
    }

    package init(apps: SignToLoginStore, clock: GatehouseClock, settings: GatehouseConfiguration.Signature, publicURL: String, secrets: Secrets,
                 blobs: any BlobStore) {
        self.apps = apps
        self.clock = clock
        self.settings = settings
        self.publicURL = publicURL
        self.secrets = secrets
        self.blobs = blobs
    }
}
