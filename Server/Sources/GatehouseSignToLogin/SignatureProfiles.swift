import FluentKit
import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform

/// The person's side of their Sign To Login profile (docs/sign-to-login.md, "The profile"): read
/// it, change its optional fields and its picture (each field by `SignatureProfileRules`, as the
/// SDK's form and `/register/` check them), and delete it with every signature kept: a person's
/// right. The site's profile page signs the person in by a code mailed to the address.
package struct SignatureProfiles: Sendable {
    package let database: DatabaseProvider
    package let records: SignToLoginStore
    package let accounts: AccountStore
    package let verification: VerificationService
    package let sessions: SessionService
    package let composer: MessageComposer
    package let clock: GatehouseClock
    package let blobs: any BlobStore
    package let photoMaxBytes: Int
    package let codeTTL: TimeInterval
    package let publicURL: String
    package let codes: CodeIssuer
    package let audit: AuditLog

    package static let notFound = GatehouseError.notFound(.signatureProfileNotFound, "error.signatureProfileNotFound")

    package init(database: DatabaseProvider, records: SignToLoginStore, verification: VerificationService, sessions: SessionService,
                 composer: MessageComposer, clock: GatehouseClock, blobs: any BlobStore, photoMaxBytes: Int, codeTTL: TimeInterval, publicURL: String,
                 codes: CodeIssuer, audit: AuditLog) {
        self.database = database
        self.records = records
        self.accounts = AccountStore(database: database)
        self.verification = verification
        self.sessions = sessions
        self.composer = composer
        self.clock = clock
        self.blobs = blobs
        self.photoMaxBytes = photoMaxBytes
        self.codeTTL = codeTTL
        self.publicURL = publicURL
        self.codes = codes
        self.audit = audit
    }

    /// The editable fields, by the API's names and the spec's.
    private static let editable: [(WritableKeyPath<SignatureProfileUpdate, String?>, SignatureProfileRules.Field)] = [
        (\.phoneNumber, .phoneNumber), (\.companyName, .companyName), (\.position, .position), (\.birthday, .birthday), (\.sex, .sex),
    ]

    /// My profile; 404 before an enrolment.
    package func profile(of account: UUID) async throws -> SignatureProfile {
        guard let kept = try await records.profile(of: account), let row = try await accounts.row(id: account) else { throw Self.notFound }
        let devices = try await records.enrolments(accountID: account).filter(\.proven).map(\.deviceClass)
        let f = kept.fields
        return SignatureProfile(email: row.email ?? "", userName: f["user_name"] ?? row.firstName ?? "", phoneNumber: f["phone_number"],
                                companyName: f["company_name"], position: f["position"], birthday: f["birthday"], sex: f["sex"],
                                country: f["country"], city: f["city"], address: f["address"],
                                photoUrl: kept.photoBlob == nil ? nil : publicURL + V1.Signatures.photo.path, devices: devices, updatedAt: kept.updatedAt)
    }

    /// Changes the optional fields given (empty clears); 400 naming the first field its rule refuses.
    package func update(_ account: UUID, _ change: SignatureProfileUpdate, by actor: AuditActor, origin: AuditOrigin) async throws -> SignatureProfile {
        guard var fields = try await records.profile(of: account)?.fields else { throw Self.notFound }
        var changed: [String] = []
        for (path, field) in Self.editable {
            guard let raw = change[keyPath: path] else { continue }
            let value = raw.trimmingCharacters(in: .whitespaces)
            if value.isEmpty {
                fields[field.rawValue] = nil
            } else {
                let checked = field == .sex ? value.lowercased() : value
                guard SignatureProfileRules.isValid(checked, for: field) else {
                    throw GatehouseError(.invalidInput, .invalidParameter, LocalizedText("error.signatureProfileField", [field.rawValue]),
                                         field: Self.apiName(field))
                }
                fields[field.rawValue] = checked
            }
            changed.append(field.rawValue)
        }
        try await records.saveProfile(of: account, fields: fields, photoBlob: nil, now: clock.now())
        try await audit.record(AuditEvent(.signatureProfileChanged, by: actor, account: account, origin: origin,
                                                detail: ["fields": changed.sorted().joined(separator: ",")]))
        return try await profile(of: account)
    }

    /// Sets (or, with nil, removes) the picture: an image (PNG, JPEG, GIF or WebP, whole) within the photo limit.
    package func setPhoto(_ account: UUID, _ bytes: Data?, by actor: AuditActor, origin: AuditOrigin) async throws -> SignatureProfile {
        guard let fields = try await records.profile(of: account)?.fields else { throw Self.notFound }
        var key: String?
        if let bytes {
            guard bytes.count <= photoMaxBytes else { throw GatehouseError.bodyTooLarge(photoMaxBytes) }
            guard let format = ImageFormat.allCases.first(where: { $0.matches(bytes) }), ImageStructure.isComplete(bytes, format: format) else {
                throw GatehouseError(.invalidInput, .invalidImage, LocalizedText("error.invalidImage"), field: "photo")
            }
            key = try await blobs.put(bytes).hex
        }
        try await records.saveProfile(of: account, fields: fields, photoBlob: .some(key), now: clock.now())
        try await audit.record(AuditEvent(.signatureProfileChanged, by: actor, account: account, origin: origin,
                                                detail: ["fields": bytes == nil ? "photo removed" : "photo"]))
        return try await profile(of: account)
    }

    /// The picture's bytes and type, if any.
    package func photo(of account: UUID) async throws -> (bytes: Data, contentType: String)? {
        guard let hex = try await records.profile(of: account)?.photoBlob, let key = BlobKey(hex: hex), let bytes = try await blobs.get(key) else { return nil }
        return (bytes, ImageFormat.allCases.first { $0.matches(bytes) }?.rawValue ?? "application/octet-stream")
    }

    /// Deletes my profile and signatures, in one transaction (the same erasure as an account's:
    /// documents keep the fact of the signing). The account and its sessions stay.
    package func erase(_ account: UUID, by actor: AuditActor, origin: AuditOrigin) async throws {
        let hasProfile = try await records.profile(of: account) != nil
        let enrolments = try await records.enrolments(accountID: account)
        guard hasProfile || !enrolments.isEmpty else { throw Self.notFound }
        let email = try await accounts.row(id: account)?.email
        try await database.db.withTransaction { tx in
            try await records.eraseAccount(account, email: email, on: tx)
            try await audit.record(AuditEvent(.signatureErased, by: actor, account: account, origin: origin), on: tx)
        }
    }

    // MARK: The site's sign-in

    /// Mails a code to the address when it has a Sign To Login profile; the same answer either way.
    package func requestCode(email raw: String, origin: RequestOrigin) async throws {
        guard let email = EmailAddress.normalize(raw) else {
            throw GatehouseError(.invalidInput, .invalidEmail, LocalizedText("error.invalidEmail", [String(raw.prefix(64))]), field: "email")
        }
        guard let account = try await accounts.owner(of: .email(email)), account.deletionRequestedAt == nil,
              let id = account.id, try await records.profile(of: id) != nil else { return }
        _ = try await codes.issueCode(.signatureProfile, to: .email(email), accountID: id, origin: origin) { code in
            composer.code(.signIn, to: email, channel: .email, code: code, ttl: codeTTL, language: origin.language)
        }
    }

    /// The code from the mail: a session of the account (the page keeps it in a cookie).
    package func signIn(email raw: String, code: String, origin: RequestOrigin) async throws -> IssuedSession {
        let refused = GatehouseError(.unauthorized, .invalidCode, LocalizedText("error.invalidCode"))
        guard let email = EmailAddress.normalize(raw) else { throw refused }
        let proof = try await verification.check(code: code, purpose: .signatureProfile, destination: email)
        guard let account = try await accounts.owner(of: .email(email)), let id = account.id, account.deletionRequestedAt == nil else { throw refused }
        return try await database.db.withTransaction { tx in
            try await verification.consume(proof, on: tx)
            return try await sessions.create(accountID: id, methods: [.mail], device: "Sign To Login profile page", ip: origin.ip, on: tx)
        }
    }

    private static func apiName(_ field: SignatureProfileRules.Field) -> String {
        switch field {
        case .userName: "userName"
        case .phoneNumber: "phoneNumber"
        case .companyName: "companyName"
        case .position: "position"
        case .birthday: "birthday"
        case .sex: "sex"
        }
    }
}
