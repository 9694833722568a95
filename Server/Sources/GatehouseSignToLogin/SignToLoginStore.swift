import FluentKit
import Foundation
import GatehouseFoundation
import GatehousePlatform
import SQLKit

/// Every query of Sign To Login's tables (docs/architecture.md, "Data access"): apps, signature
/// models, consents, profiles, enrolment batches, attempts and documents. The services decide what
/// happens; this reads and writes. A write that belongs to a caller's transaction takes it (`on:`),
/// so the caller keeps what it depends on in one transaction.
package struct SignToLoginStore: Sendable {
    package let database: DatabaseProvider
    /// Enabled apps by their key's hash (`enabledApp(keyHash:)`), each kept at most
    /// `GATEHOUSE_APP_CACHE_SECONDS`; forgotten when an app is written here or on another instance.
    package let enabledApps: FreshCache<String, AppRecord>
    /// Tells the other instances that an app changed (`BusTopic.appChanged`).
    private let bus: (any EventBus)?

    /// `bus` nil, or an `appCacheTTL` of 0 (the command line's own processes), keeps no copies.
    package init(database: DatabaseProvider, appCacheTTL: Double = 0, bus: (any EventBus)? = nil) {
        self.database = database
        self.bus = bus
        self.enabledApps = FreshCache(ttl: bus == nil ? 0 : appCacheTTL)
    }

    /// Keeps the app copies in step with other instances: an app changed anywhere, or a gap in
    /// the bus, drops them all.
    package func follow(_ bus: any EventBus) -> BusSubscription {
        let cache = enabledApps
        bus.onGap { cache.invalidateAll() }
        return bus.subscribe(topic: BusTopic.appChanged, account: nil) { _ in cache.invalidateAll() }
    }

    private var sql: any SQLDatabase { database.sql }

    // MARK: Apps

    /// The apps `owner` registered (every app when nil), newest first.
    package func apps(owner: UUID?) async throws -> [AppModel] {
        var query = AppModel.query(on: database.db)
        if let owner { query = query.filter(\.$ownerID == owner) }
        return try await query.sort(\.$createdAt, .descending).sort(\.$id).all()
    }

    /// An account's signature models as an operator sees them: the type of device, the app it was
    /// enrolled through, when, and whether its address was proven.
    package struct EnrolmentSummary: Sendable, Equatable {
        package var deviceClass: String
        package var app: String?
        package var createdAt: Date
        package var proven: Bool
    }

    package func enrolments(accountID: UUID) async throws -> [EnrolmentSummary] {
        try await sql.raw("""
            SELECT m.device_class, m.created_at, m.proven_at, a.name FROM signature_models m LEFT JOIN apps a ON a.id = m.app_id
            WHERE m.account_id = \(bind: accountID) ORDER BY m.created_at
            """).all().map { row in
            EnrolmentSummary(deviceClass: try row.decode(column: "device_class", as: String.self), app: try row.decode(column: "name", as: String?.self),
                             createdAt: try row.decode(column: "created_at", as: Date.self),
                             proven: try row.decode(column: "proven_at", as: Date?.self) != nil)
        }
    }

    /// A person's profile as kept: its fields (the spec's names), the photo's blob and when it changed.
    package func profile(of account: UUID) async throws -> (fields: [String: String], photoBlob: String?, updatedAt: Date)? {
        guard let row = try await sql.raw("""
            SELECT profile, photo_blob_key, updated_at FROM signature_profiles WHERE account_id = \(bind: account)
            """).first() else { return nil }
        let text = try row.decode(column: "profile", as: String.self)
        let fields = (try? JSONDecoder().decode([String: String].self, from: Data(text.utf8))) ?? [:]
        return (fields, try row.decode(column: "photo_blob_key", as: String?.self), try row.decode(column: "updated_at", as: Date.self))
    }

    /// Writes a profile's fields (and, when given, its photo: `.some(nil)` removes it).
    package func saveProfile(of account: UUID, fields: [String: String], photoBlob: String??, now: Date) async throws {
        let text = String(decoding: try JSONEncoder().encode(fields), as: UTF8.self)
        if let photoBlob {
            try await sql.raw("""
                UPDATE signature_profiles SET profile = \(bind: text), photo_blob_key = \(bind: photoBlob), updated_at = \(bind: now)
                WHERE account_id = \(bind: account)
                """).run()
        } else {
            try await sql.raw("""
                UPDATE signature_profiles SET profile = \(bind: text), updated_at = \(bind: now) WHERE account_id = \(bind: account)
                """).run()
        }
    }

    package func app(id: UUID) async throws -> AppModel? {
        try await AppModel.find(id, on: database.db)
    }

    /// The enabled app whose key hashes to `keyHash`: a copy at most `enabledApps.ttl` old, else
    /// one plain statement (prepared on PostgreSQL), since every Sign To Login request starts with it.
    package func enabledApp(keyHash: String) async throws -> AppRecord? {
        try await enabledApps.value(keyHash) { try await readEnabledApp(keyHash: keyHash) }
    }

    private func readEnabledApp(keyHash: String) async throws -> AppRecord? {
        guard let row = try await sql.preparedRows("""
            SELECT id, owner_id, name, bundle_id, email, website, icon_blob_key, key_hint, created_at, updated_at, min_similarity
            FROM apps WHERE key_hash = \(bind: keyHash) AND enabled = \(bind: true)
            """).first else { return nil }
        return AppRecord(
            id: try row.decode(column: "id", as: UUID.self), ownerID: try row.decode(column: "owner_id", as: UUID?.self),
            name: try row.decode(column: "name", as: String.self), bundleID: try row.decode(column: "bundle_id", as: String.self),
            email: try row.decode(column: "email", as: String.self), website: try row.decode(column: "website", as: String?.self),
            iconBlobKey: try row.decode(column: "icon_blob_key", as: String?.self), enabled: true,
            keyHint: try row.decode(column: "key_hint", as: String.self), createdAt: try row.decode(column: "created_at", as: Date.self),
            updatedAt: try row.decode(column: "updated_at", as: Date.self), minSimilarity: try row.decode(column: "min_similarity", as: Double?.self))
    }

    /// The app whose key hashes to `keyHash`, enabled or not.
    package func app(keyHash: String) async throws -> AppModel? {
        try await AppModel.query(on: database.db).filter(\.$keyHash == keyHash).first()
    }

    package func appCount(owner: UUID) async throws -> Int {
        try await AppModel.query(on: database.db).filter(\.$ownerID == owner).count()
    }

    /// Creates the app with its event in the audit trail, in one transaction.
    /// (Nothing to forget: only apps found are kept, so no copy can stand for a new one.)
    package func create(_ app: AppModel, audit event: AuditEvent, clock: GatehouseClock) async throws {
        try await database.db.withTransaction { tx in
            try await app.create(on: tx)
            try await AuditLog(database: database, clock: clock).record(event, on: tx)
        }
    }

    /// Saves the app, with its event in the audit trail when there is one, in one transaction;
    /// the copies of apps are forgotten here once it is written, and on the other instances when
    /// they hear of it (the bus delivers on commit).
    package func update(_ app: AppModel, audit event: AuditEvent? = nil, clock: GatehouseClock) async throws {
        try await database.db.withTransaction { tx in
            try await app.update(on: tx)
            if let event { try await AuditLog(database: database, clock: clock).record(event, on: tx) }
            try await appChanged(on: tx)
        }
        enabledApps.invalidateAll()
    }

    private func appChanged(on tx: any GatehouseDatabase) async throws {
        try await bus?.publish(BusEvent(topic: BusTopic.appChanged, account: nil), on: tx)
    }

    // MARK: Models and consents

    /// Whether the account has a proven model (of any type of device).
    package func hasProvenModel(accountID: UUID) async throws -> Bool {
        try await sql.raw("""
            SELECT 1 AS found FROM signature_models WHERE account_id = \(bind: accountID) AND proven_at IS NOT NULL LIMIT 1
            """).first() != nil
    }

    /// What an attempt needs to know of the person behind an address, in one statement: the
    /// confirmed owner of the address not being deleted (`SignatureService.account(email:)`'s
    /// rule), whether they let this app use their signature, and their proven models' rows: the
    /// one of this type of device and the newest. Nil when nobody owns the address.
    ///
    /// With `recentAttempts` > 0 the same statement brings the replay fingerprints of the owner's
    /// latest attempts as one text (`Enrolment.recentFingerprints`): one round trip for what an
    /// attempt reads, where a separate query cost another, and on SQLite a hop to its loop for
    /// every row.
    package func enrolment(email: String, appID: UUID, deviceClass: String, recentAttempts: Int = 0) async throws -> Enrolment? {
        let limit = max(0, recentAttempts)
        // Each fingerprint is "count:base64" (no space); an attempt kept before fingerprints were is "-".
        let recent: SQLQueryString = limit == 0 ? "" : """
            ,
                   (SELECT \(unsafeRaw: database.isPostgres ? "string_agg" : "group_concat")(coalesce(r.fingerprint, '-'), ' ')
                    FROM (SELECT fingerprint FROM signature_attempts WHERE account_id = a.id
                          ORDER BY created_at DESC LIMIT \(unsafeRaw: String(limit))) r) AS recent
            """
        let query: SQLQueryString = """
            SELECT a.id AS account_id,
                   CASE WHEN EXISTS (SELECT 1 FROM signature_app_consents c WHERE c.account_id = a.id AND c.app_id = \(bind: appID))
                        THEN 1 ELSE 0 END AS consented,
                   (SELECT m.id FROM signature_models m
                    WHERE m.account_id = a.id AND m.device_class = \(bind: deviceClass) AND m.proven_at IS NOT NULL) AS device_model,
                   (SELECT m.id FROM signature_models m
                    WHERE m.account_id = a.id AND m.proven_at IS NOT NULL ORDER BY m.created_at DESC LIMIT 1) AS newest_model
            """ + recent + """

            FROM accounts a
            WHERE a.email = \(bind: email) AND a.email_confirmed_at IS NOT NULL AND a.deletion_requested_at IS NULL
            """
        guard let row = try await sql.preparedRows(query).first else { return nil }
        var fingerprints: [String]?
        if limit > 0 {
            let text = try row.decode(column: "recent", as: String?.self) ?? ""
            // By bytes: splitting 50 fingerprints' text by characters cost more than the round trip it saves.
            let items = text.utf8.split(separator: UInt8(ascii: " ")).map { String(decoding: $0, as: UTF8.self) }
            fingerprints = items.contains("-") ? nil : items
        }
        return Enrolment(accountID: try row.decode(column: "account_id", as: UUID.self),
                         consented: try row.decode(column: "consented", as: Int.self) != 0,
                         deviceModel: try row.decode(column: "device_model", as: UUID?.self),
                         newestModel: try row.decode(column: "newest_model", as: UUID?.self),
                         recentFingerprints: fingerprints)
    }

    package struct Enrolment: Sendable, Equatable {
        package var accountID: UUID
        package var consented: Bool
        /// The proven model of the type of device asked about, and the newest of any type.
        package var deviceModel: UUID?
        package var newestModel: UUID?
        /// The encoded replay fingerprints of the owner's latest attempts (in no particular order),
        /// when asked for and every one of them has one; nil otherwise (an attempt kept before fingerprints
        /// were: `recentAttemptFingerprints` reads their points).
        package var recentFingerprints: [String]? = nil
        /// Enrolled at all: with a proven model of some type of device.
        package var enrolled: Bool { newestModel != nil }
    }

    /// A model's text by its row.
    package func model(id: UUID) async throws -> String? {
        try await sql.preparedRows("SELECT model FROM signature_models WHERE id = \(bind: id)").first?.decode(column: "model", as: String.self)
    }

    /// One enrolment's writes, in the caller's transaction: the account's unproven models go (the
    /// answer says whether there were any), the model of this type of device is replaced, the app
    /// gets the person's consent, the profile is replaced, and the used enrolment batch is spent.
    package func enrol(accountID id: UUID, deviceClass: String, appID: UUID, model: String, device: String?, profile: String,
                       photoBlob: String?, spendingBatch tokenHash: String?, now: Date, on tx: any GatehouseDatabase) async throws -> Bool {
        let unproven = try await tx.raw("DELETE FROM signature_models WHERE account_id = \(bind: id) AND proven_at IS NULL RETURNING id").all()
        try await tx.raw("DELETE FROM signature_models WHERE account_id = \(bind: id) AND device_class = \(bind: deviceClass)").run()
        try await tx.raw("""
            INSERT INTO signature_models (id, account_id, device_class, app_id, model, device, created_at, proven_at)
            VALUES (\(bind: UUID()), \(bind: id), \(bind: deviceClass), \(bind: appID), \(bind: model), \(bind: device), \(bind: now), \(bind: now))
            """).run()
        try await tx.raw("""
            INSERT INTO signature_app_consents (account_id, app_id, created_at) VALUES (\(bind: id), \(bind: appID), \(bind: now))
            ON CONFLICT (account_id, app_id) DO NOTHING
            """).run()
        try await tx.raw("DELETE FROM signature_profiles WHERE account_id = \(bind: id)").run()
        try await tx.raw("""
            INSERT INTO signature_profiles (account_id, profile, photo_blob_key, updated_at)
            VALUES (\(bind: id), \(bind: profile), \(bind: photoBlob), \(bind: now))
            """).run()
        if let tokenHash { try await tx.raw("DELETE FROM signature_enrolment_batches WHERE token_hash = \(bind: tokenHash)").run() }
        return !unproven.isEmpty
    }

    // MARK: Enrolment batches

    /// The accepted signatures kept under an enrolment token for this client, address and device, while fresh.
    package func keptBatch(tokenHash: String, appID: UUID, email: String, deviceClass: String, now: Date) async throws -> String? {
        try await sql.raw("""
            SELECT accepted FROM signature_enrolment_batches
            WHERE token_hash = \(bind: tokenHash) AND app_id = \(bind: appID) AND email = \(bind: email)
              AND device_class = \(bind: deviceClass) AND expires_at > \(bind: now)
            """).first(decodingColumn: "accepted", as: String.self)
    }

    /// Keeps accepted signatures under a token (replacing the one it follows), and forgets expired batches.
    package func keepBatch(tokenHash: String, replacing old: String?, appID: UUID, email: String, deviceClass: String, accepted: String,
                           now: Date, expires: Date) async throws {
        try await database.db.withTransaction { tx in
            if let old { try await tx.raw("DELETE FROM signature_enrolment_batches WHERE token_hash = \(bind: old)").run() }
            try await tx.raw("DELETE FROM signature_enrolment_batches WHERE expires_at <= \(bind: now)").run()
            try await tx.raw("""
                INSERT INTO signature_enrolment_batches (token_hash, app_id, email, device_class, accepted, expires_at)
                VALUES (\(bind: tokenHash), \(bind: appID), \(bind: email), \(bind: deviceClass), \(bind: accepted), \(bind: expires))
                ON CONFLICT (token_hash) DO UPDATE SET accepted = excluded.accepted, expires_at = excluded.expires_at
                """).run()
        }
    }

    // MARK: Attempts

    /// A scored attempt, in the caller's transaction (with the session it may open).
    package func insertAttempt(id: String, accountID: UUID, appID: UUID, similarity: Double, points: String, fingerprint: String,
                               photoBlob: String?, location: String?, country: String?, city: String?, address: String?, clientTime: String?,
                               now: Date, on tx: any GatehouseDatabase) async throws {
        try await tx.raw("""
            INSERT INTO signature_attempts (id, account_id, app_id, similarity, points, fingerprint, photo_blob_key, location, country, city, address,
                                            client_time, created_at)
            VALUES (\(bind: id), \(bind: accountID), \(bind: appID), \(bind: similarity), \(bind: points), \(bind: fingerprint), \(bind: photoBlob),
                    \(bind: location), \(bind: country), \(bind: city), \(bind: address), \(bind: clientTime), \(bind: now))
            """).run()
    }

    /// The account's latest attempts, newest first: each one's replay fingerprint, or its points
    /// when it was made before fingerprints were kept.
    package func recentAttemptFingerprints(accountID: UUID, limit: Int) async throws -> [(fingerprint: String?, points: String?)] {
        try await sql.raw("""
            SELECT fingerprint, CASE WHEN fingerprint IS NULL THEN points END AS points FROM signature_attempts
            WHERE account_id = \(bind: accountID) ORDER BY created_at DESC LIMIT \(unsafeRaw: String(max(0, limit)))
            """).all().map {
                (try $0.decodeNil(column: "fingerprint") ? nil : $0.decode(column: "fingerprint", as: String.self),
                 try $0.decodeNil(column: "points") ? nil : $0.decode(column: "points", as: String.self))
            }
    }

    /// Stores a model made again by a newer verifier in place of the one it was made from (nothing
    /// when the row changed meanwhile: a new enrolment wins).
    package func replaceModel(id: UUID, from old: String, with new: String) async throws {
        try await sql.raw("UPDATE signature_models SET model = \(bind: new) WHERE id = \(bind: id) AND model = \(bind: old)").run()
    }

    /// Marks an attempt of this account and app, at or above `floor` and not used yet, as used by a
    /// save (in the save's transaction), with the app's `threshold` at that moment (what its
    /// history's warning compares with); false when there is no such attempt.
    package func spendAttempt(id: String, accountID: UUID, appID: UUID, floor: Double, threshold: Double, now: Date,
                              on tx: any GatehouseDatabase) async throws -> Bool {
        try await tx.raw("""
            UPDATE signature_attempts SET used_at = \(bind: now), signed_threshold = \(bind: threshold)
            WHERE id = \(bind: id) AND account_id = \(bind: accountID) AND app_id = \(bind: appID)
              AND used_at IS NULL AND similarity >= \(bind: floor)
            RETURNING id
            """).first() != nil
    }

    package func photoBlobKey(attemptID: String) async throws -> String? {
        try await sql.raw("SELECT photo_blob_key FROM signature_attempts WHERE id = \(bind: attemptID)")
            .first(decodingColumn: "photo_blob_key", as: String?.self) ?? nil
    }

    // MARK: Documents

    /// A document that holds a version with this hash: its id, its newest hash, and whether the
    /// account saved a version of it. Most recently changed first.
    package struct Holder: Sendable {
        package var id: String
        package var latestHash: String
        package var savedByAccount: Bool
    }

    package func holders(ofHash hash: String, accountID: UUID, on tx: any GatehouseDatabase) async throws -> [Holder] {
        try await tx.raw("""
            SELECT d.id, d.latest_hash,
                   (SELECT COUNT(*) FROM signature_document_versions p WHERE p.document_id = d.id AND p.account_id = \(bind: accountID)) AS mine
            FROM signature_documents d
            WHERE d.id IN (SELECT document_id FROM signature_document_versions WHERE document_hash = \(bind: hash))
            ORDER BY d.updated_at DESC, d.id
            """).all().map { row in
            Holder(id: try row.decode(column: "id", as: String.self), latestHash: try row.decode(column: "latest_hash", as: String.self),
                   savedByAccount: try row.decode(column: "mine", as: Int.self) > 0)
        }
    }

    /// Compare and set: the document's newest hash becomes `hash` only if it is still `previousHash`.
    /// Answers the new number of versions, nil when another save came first.
    package func extend(documentID: String, from previousHash: String, to hash: String, now: Date, on tx: any GatehouseDatabase) async throws -> Int? {
        try await tx.raw("""
            UPDATE signature_documents SET latest_hash = \(bind: hash), versions = versions + 1, updated_at = \(bind: now)
            WHERE id = \(bind: documentID) AND latest_hash = \(bind: previousHash) RETURNING versions
            """).first(decodingColumn: "versions", as: Int.self)
    }

    package func insertDocument(id: String, hash: String, forkedFrom: String?, now: Date, on tx: any GatehouseDatabase) async throws {
        try await tx.raw("""
            INSERT INTO signature_documents (id, latest_hash, versions, created_at, updated_at, forked_from)
            VALUES (\(bind: id), \(bind: hash), 1, \(bind: now), \(bind: now), \(bind: forkedFrom))
            """).run()
    }

    /// A version of a document and the signatures on it, in their order.
    package func insertVersion(documentID: String, seq: Int, hash: String, accountID: UUID, appID: UUID, signatureIDs: [String], now: Date,
                               on tx: any GatehouseDatabase) async throws {
        try await tx.raw("""
            INSERT INTO signature_document_versions (document_id, seq, document_hash, account_id, app_id, created_at)
            VALUES (\(bind: documentID), \(bind: seq), \(bind: hash), \(bind: accountID), \(bind: appID), \(bind: now))
            """).run()
        for (position, id) in signatureIDs.enumerated() {
            try await tx.raw("""
                INSERT INTO signature_version_signatures (document_id, seq, position, signature_id)
                VALUES (\(bind: documentID), \(bind: seq), \(bind: position), \(bind: id))
                """).run()
        }
    }

    package func latestHash(documentID: String) async throws -> String? {
        try await sql.raw("SELECT latest_hash FROM signature_documents WHERE id = \(bind: documentID)")
            .first(decodingColumn: "latest_hash", as: String.self)
    }

    package func documentExists(id: String) async throws -> Bool {
        try await sql.raw("SELECT 1 AS found FROM signature_documents WHERE id = \(bind: id)").first() != nil
    }

    /// One signing of a document as stored, with the signer's names (for the history).
    package struct Signing: Sendable {
        package var signatureID: String
        package var similarity: Double
        /// The threshold of the app it was signed through, at the save (nil: signed before it was kept, and it passed).
        package var signedThreshold: Double?
        package var signedAt: Date
        package var clientTime, location, country, city, address, photoBlobKey: String?
        package var documentHash: String
        package var firstName, lastName, email: String?
        /// The signer's account was deleted: the history names a deleted account.
        package var signerErased: Bool
    }

    /// A document's signings, by version and position.
    package func signings(documentID: String) async throws -> [Signing] {
        try await sql.raw("""
            SELECT a.id AS signature_id, a.similarity, a.signed_threshold, a.created_at, a.client_time, a.location, a.country, a.city, a.address,
                   a.photo_blob_key, v.document_hash, acc.first_name, acc.last_name, acc.email, acc.erased_at
            FROM signature_version_signatures s
            JOIN signature_document_versions v ON v.document_id = s.document_id AND v.seq = s.seq
            JOIN signature_attempts a ON a.id = s.signature_id
            LEFT JOIN accounts acc ON acc.id = a.account_id
            WHERE s.document_id = \(bind: documentID)
            ORDER BY s.seq, s.position
            """).all().map { row in
            Signing(
                signatureID: try row.decode(column: "signature_id", as: String.self), similarity: try row.decode(column: "similarity", as: Double.self),
                signedThreshold: try row.decode(column: "signed_threshold", as: Double?.self),
                signedAt: try row.decode(column: "created_at", as: Date.self), clientTime: try row.decode(column: "client_time", as: String?.self),
                location: try row.decode(column: "location", as: String?.self), country: try row.decode(column: "country", as: String?.self),
                city: try row.decode(column: "city", as: String?.self), address: try row.decode(column: "address", as: String?.self),
                photoBlobKey: try row.decode(column: "photo_blob_key", as: String?.self),
                documentHash: try row.decode(column: "document_hash", as: String.self),
                firstName: try row.decode(column: "first_name", as: String?.self), lastName: try row.decode(column: "last_name", as: String?.self),
                email: try row.decode(column: "email", as: String?.self), signerErased: try row.decode(column: "erased_at", as: Date?.self) != nil)
        }
    }

    // MARK: Deletion

    /// Whether the account owns an app that is enabled (its key still works for someone's users).
    package func ownsEnabledApp(_ account: UUID, on db: any GatehouseDatabase) async throws -> Bool {
        try await AppModel.query(on: db).filter(\.$ownerID == account).filter(\.$enabled == true).count() > 0
    }

    /// An erased account's Sign To Login data, in the erasure's transaction: its models, profile,
    /// consents and the enrolments waiting under its email go; its attempts go, except those a
    /// document's history names, which keep only their id, similarity and time (their points,
    /// photo and place are erased). Photos' blobs go with the collector.
    package func eraseAccount(_ account: UUID, email: String?, on tx: any GatehouseDatabase) async throws {
        try await tx.raw("DELETE FROM signature_models WHERE account_id = \(bind: account)").run()
        try await tx.raw("DELETE FROM signature_profiles WHERE account_id = \(bind: account)").run()
        try await tx.raw("DELETE FROM signature_app_consents WHERE account_id = \(bind: account)").run()
        if let email { try await tx.raw("DELETE FROM signature_enrolment_batches WHERE email = \(bind: email)").run() }
        try await tx.raw("""
            DELETE FROM signature_attempts WHERE account_id = \(bind: account)
            AND NOT EXISTS (SELECT 1 FROM signature_version_signatures s WHERE s.signature_id = signature_attempts.id)
            """).run()
        try await tx.raw("""
            UPDATE signature_attempts SET points = '[]', photo_blob_key = NULL, location = NULL, country = NULL, city = NULL, address = NULL,
                client_time = NULL
            WHERE account_id = \(bind: account)
            """).run()
    }
}
