import FluentKit
import Foundation
import GatehouseVerifier
import GatehouseAPI
import NIOPosix
import SQLKit

/// The signature identity service's rules (docs/signature-identity.md): who is enrolled from
/// which type of device, enrolment (with the email-code proof for an address that already has
/// an account or a model), and authentication attempts kept for the history.
struct SignatureService: AccountConcept {
    let core: AccountCore
    var verifier = SignatureVerifier()

    private var settings: GatehouseConfiguration.Signature { configuration.signature }
    private var sql: any SQLDatabase { database.sql }

    // MARK: Devices

    /// The type of device a model is enrolled from, by the spec's `device_version`.
    enum DeviceClass: String, Sendable {
        case iphone, ipad, ipod, other

        init(deviceVersion: String?) {
            let text = (deviceVersion ?? "").lowercased()
            self = text.contains("ipad") ? .ipad : text.contains("ipod") ? .ipod : text.contains("iphone") ? .iphone : .other
        }
    }

    // MARK: Accounts by email

    /// The account an email names for this service: the owner of the confirmed address, else an
    /// account holding it unconfirmed (one enrolled here and not confirmed yet).
    func account(email: String) async throws -> AccountModel? {
        if let owner = try await store.owner(of: .email(email)) { return owner }
        return try await AccountModel.query(on: database.db).filter(\.$email == email).first()
    }

    private func model(accountID: UUID, device: DeviceClass?) async throws -> SignatureVerifier.Model? {
        let rows: [any SQLRow]
        if let device {
            rows = try await sql.raw("SELECT model FROM signature_models WHERE account_id = \(bind: accountID) AND device_class = \(bind: device.rawValue)").all()
        } else {
            rows = try await sql.raw("SELECT model FROM signature_models WHERE account_id = \(bind: accountID) ORDER BY created_at DESC").all()
        }
        guard let text = try rows.first?.decode(column: "model", as: String.self) else { return nil }
        return try? JSONDecoder().decode(SignatureVerifier.Model.self, from: Data(text.utf8))
    }

    private func hasAnyModel(accountID: UUID) async throws -> Bool {
        try await sql.raw("SELECT 1 AS found FROM signature_models WHERE account_id = \(bind: accountID) LIMIT 1").first() != nil
    }

    // MARK: /login/

    enum Presence: Equatable, Sendable { case enrolled, notEnrolled, unknown }

    /// Whether the email has an account enrolled from this type of device.
    func presence(email: String, deviceVersion: String?) async throws -> Presence {
        guard let account = try await account(email: email) else { return .unknown }
        return try await model(accountID: account.id!, device: DeviceClass(deviceVersion: deviceVersion)) == nil ? .notEnrolled : .enrolled
    }

    // MARK: /register/

    struct Registration: Sendable {
        var email: String
        var userName: String
        var signatures: [SignaturePoints]
        var deviceVersion: String?
        /// The device facts stored with the model (os_version, device_version, resolution, time, location).
        var device: [String: String]
        /// The optional profile (company_name, position, phone_number, birthday, sex, country, city, address, location).
        var profile: [String: String]
        var photo: Data?
        var emailCode: String?
        var appID: UUID
    }

    enum Enrolled: Equatable, Sendable {
        /// The model is made; a session of the account.
        case session(token: String)
        /// Not every signature fits: send `required` more.
        case incomplete(required: Int, exist: Int, model: Int, incorrect: Int)
        /// The address already has an account or a model: a code went to it.
        case emailCodeSent
    }

    func register(_ r: Registration, origin: RequestOrigin) async throws -> Enrolled {
        let device = DeviceClass(deviceVersion: r.deviceVersion)
        let existing = try await account(email: r.email)
        var proof: VerificationCodeModel?
        if let existing {
            _ = existing
            // Someone already answers to this address: enrolling a signature for it needs the address.
            guard let code = r.emailCode else {
                _ = try await issueCode(.signatureEnrolment, to: .email(r.email), accountID: existing.id, origin: origin) { code in
                    composer.code(.signup, to: r.email, channel: .email, code: code, ttl: limits.codeTTL, language: origin.language)
                }
                return .emailCodeSent
            }
            proof = try await verification.check(code: code, purpose: .signatureEnrolment, destination: r.email)
        }

        // The signatures: the ones kept from an earlier try, and these; compared on a thread of
        // their own (45 comparisons for 10 signatures).
        let now = clock.now()
        let kept = try await keptSignatures(email: r.email, device: device, now: now)
        let (verifier, fresh, needed) = (self.verifier, r.signatures, settings.enrolmentSignatures)
        let step = try await NIOThreadPool.singleton.runIfActive {
            verifier.continueEnrolment(kept: kept, new: fresh, needed: needed)
        }
        let model: SignatureVerifier.Model
        switch step {
        case .incomplete(let accepted, let required, let incorrect):
            try await keep(accepted, email: r.email, device: device, now: now)
            return .incomplete(required: required, exist: accepted.count, model: needed, incorrect: incorrect)
        case .model(let made):
            model = made
        }

        // Enrol: the account (made for a new address), its model, profile and a session, at once.
        let modelText = String(decoding: try JSONEncoder().encode(model), as: UTF8.self)
        let deviceText = String(decoding: try JSONEncoder().encode(r.device), as: UTF8.self)
        let profileText = String(decoding: try JSONEncoder().encode(r.profile), as: UTF8.self)
        var photoKey: String?
        if let photo = r.photo { photoKey = try await blobs.put(photo).hex }
        var created: AccountModel?
        let account: AccountModel
        if let existing {
            account = existing
        } else {
            let fresh = AccountModel(passwordHash: try await hasher.hash(secrets.token()), now: now)
            fresh.email = r.email
            fresh.firstName = r.userName
            fresh.locale = origin.language.rawValue
            account = fresh
            created = fresh
        }
        let session: IssuedSession
        let (proofRow, createdRow, photoBlob) = (proof, created, photoKey)
        do {
            session = try await database.db.transaction { tx in
                let sql = tx as! any SQLDatabase
                if let proofRow { try await verification.consume(proofRow, on: tx) }
                if let createdRow { try await createdRow.create(on: tx) }
                let id = account.id!
                try await sql.raw("DELETE FROM signature_models WHERE account_id = \(bind: id) AND device_class = \(bind: device.rawValue)").run()
                try await sql.raw("""
                    INSERT INTO signature_models (id, account_id, device_class, app_id, model, device, created_at)
                    VALUES (\(bind: UUID()), \(bind: id), \(bind: device.rawValue), \(bind: r.appID), \(bind: modelText), \(bind: deviceText), \(bind: now))
                    """).run()
                try await sql.raw("DELETE FROM signature_profiles WHERE account_id = \(bind: id)").run()
                try await sql.raw("""
                    INSERT INTO signature_profiles (account_id, profile, photo_blob_key, updated_at)
                    VALUES (\(bind: id), \(bind: profileText), \(bind: photoBlob), \(bind: now))
                    """).run()
                try await sql.raw("DELETE FROM signature_enrolments WHERE email = \(bind: r.email) AND device_class = \(bind: device.rawValue)").run()
                return try await sessions.create(accountID: id, device: r.deviceVersion.map { "Sign To Login (\($0))" } ?? "Sign To Login",
                                                 ip: origin.ip, on: tx)
            }
        } catch where error.isConstraintViolation {
            // The same address enrolled by a concurrent request: it has an account now, so a code is needed.
            throw GatehouseError.conflict(.emailTaken, "error.emailTaken")
        }
        if let created {
            _ = try? await EmailService(core: core).sendEmailConfirmation(accountID: created.id!, origin: origin)
        }
        return .session(token: session.token)
    }

    private func keptSignatures(email: String, device: DeviceClass, now: Date) async throws -> [SignaturePoints] {
        guard let row = try await sql.raw("""
            SELECT accepted, expires_at FROM signature_enrolments WHERE email = \(bind: email) AND device_class = \(bind: device.rawValue)
            """).first() else { return [] }
        guard try row.decode(column: "expires_at", as: Date.self) > now else { return [] }
        let text = try row.decode(column: "accepted", as: String.self)
        return (try? JSONDecoder().decode([SignaturePoints].self, from: Data(text.utf8))) ?? []
    }

    private func keep(_ signatures: [SignaturePoints], email: String, device: DeviceClass, now: Date) async throws {
        let text = String(decoding: try JSONEncoder().encode(signatures), as: UTF8.self)
        let expires = now.addingTimeInterval(settings.enrolmentKeep)
        try await sql.raw("""
            INSERT INTO signature_enrolments (id, email, device_class, accepted, expires_at)
            VALUES (\(bind: UUID()), \(bind: email), \(bind: device.rawValue), \(bind: text), \(bind: expires))
            ON CONFLICT (email, device_class) DO UPDATE SET accepted = excluded.accepted, expires_at = excluded.expires_at
            """).run()
    }

    // MARK: /authenticate/

    struct Attempt: Sendable {
        var email: String
        var signature: SignaturePoints
        var deviceVersion: String?
        var photo: Data?
        var location: String?
        var country: String?
        var city: String?
        var address: String?
        var time: String?
        var appID: UUID
    }

    enum Authenticated: Equatable, Sendable {
        case scored(similarity: Double, signatureID: String)
        case unknown
        case notEnrolled
    }

    /// Scores an attempt against the account's model (the one of this type of device, else its
    /// newest) and keeps it for the history. Rate-limited per account and per client address.
    func authenticate(_ a: Attempt, origin: RequestOrigin) async throws -> Authenticated {
        if let ip = origin.ip {
            try await rateLimiter.hit("signature-ip", key: ip, limit: settings.attemptsPerIP, window: settings.attemptWindow)
        }
        guard let account = try await account(email: a.email) else { return .unknown }
        let id = account.id!
        try await rateLimiter.hit("signature-account", key: id.uuidString, limit: settings.attemptsPerAccount, window: settings.attemptWindow)
        let device = DeviceClass(deviceVersion: a.deviceVersion)
        let found: SignatureVerifier.Model?
        if let exact = try await model(accountID: id, device: a.deviceVersion == nil ? nil : device) {
            found = exact
        } else {
            found = try await model(accountID: id, device: nil)
        }
        guard let model = found else { return .notEnrolled }
        let verifier = self.verifier
        let signature = a.signature
        let raw = try await NIOThreadPool.singleton.runIfActive { verifier.similarity(signature, to: model) }
        let similarity = (raw * 100).rounded() / 100
        let attemptID = Self.randomHex(bytes: 10)
        let points = String(decoding: try JSONEncoder().encode(a.signature), as: UTF8.self)
        var photoKey: String?
        if let photo = a.photo { photoKey = try await blobs.put(photo).hex }
        try await sql.raw("""
            INSERT INTO signature_attempts (id, account_id, app_id, similarity, points, photo_blob_key, location, country, city, address, client_time, created_at)
            VALUES (\(bind: attemptID), \(bind: id), \(bind: a.appID), \(bind: similarity), \(bind: points), \(bind: photoKey), \(bind: a.location),
                    \(bind: a.country), \(bind: a.city), \(bind: a.address), \(bind: a.time), \(bind: clock.now()))
            """).run()
        return .scored(similarity: similarity, signatureID: attemptID)
    }

    /// `bytes` random bytes as lower-case hex (ids shown to clients: ≥ 80 bits).
    static func randomHex(bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<bytes).map { _ in UInt8.random(in: 0...255, using: &generator) }.hexString
    }
}
