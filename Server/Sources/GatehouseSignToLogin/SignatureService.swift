import FluentKit
import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import GatehouseVerifier
import NIOPosix

/// The Sign To Login service's rules (docs/sign-to-login.md, and docs/security.md,
/// "Sign To Login"): who is enrolled from which type of device and for which app, enrolment (every
/// address proven by an email code first), and authentication attempts (budgeted, replays refused)
/// kept for the history.
package struct SignatureService: Sendable {
    package let database: DatabaseProvider
    /// Its tables.
    package let records: SignToLoginStore
    package let clock: GatehouseClock
    package let settings: GatehouseConfiguration.Signature
    package let limits: GatehouseConfiguration.Limits
    package let hasher: PasswordHasher
    package let sessions: SessionService
    package let verification: VerificationService
    package let composer: MessageComposer
    package let secrets: Secrets
    package let rateLimiter: RateLimiter
    package let blobs: any BlobStore
    package let codes: CodeIssuer
    package let proofs: AddressProofs
    package let audit: AuditLog
    package var store: AccountStore { AccountStore(database: database) }
    package var verifier = SignatureVerifier()
    /// Models this instance has prepared, by their row (`model(row:)`).
    package let preparedModels: BoundedCache<UUID, SignatureVerifier.Prepared>

    // MARK: Devices

    /// The type of device a model is enrolled from, by the spec's `device_version`.
    package enum DeviceClass: String, Sendable {
        case iphone, ipad, ipod, other

        package init(deviceVersion: String?) {
            let text = (deviceVersion ?? "").lowercased()
            self = text.contains("ipad") ? .ipad : text.contains("ipod") ? .ipod : text.contains("iphone") ? .iphone : .other
        }
    }

    // MARK: Accounts by email

    /// The account an email names for this service: the owner of the confirmed address. An
    /// unconfirmed address is only a claim (docs/security.md, "Claims") and names nobody here; nor
    /// does an account being deleted (only a password login brings it back).
    package func account(email: String) async throws -> AccountModel? {
        guard let account = try await store.owner(of: .email(email)), account.deletionRequestedAt == nil else { return nil }
        return account
    }

    /// An account's enrolments (the operator console's account page).
    package func enrolments(accountID: UUID) async throws -> [SignToLoginStore.EnrolmentSummary] {
        try await records.enrolments(accountID: accountID)
    }

    /// The owner of the address when they have a Sign To Login enrolment (a proven model); nil
    /// for every other address alike, whether or not it has an account elsewhere, so these
    /// endpoints never tell a `/v1` account from an unknown address.
    package func enrolledAccount(email: String) async throws -> AccountModel? {
        guard let owner = try await account(email: email) else { return nil }
        return try await records.hasProvenModel(accountID: owner.id!) ? owner : nil
    }

    /// The model of a proven model's row, current and with its references' features: from memory
    /// when this instance has prepared that row before (a row's model changes only by being made
    /// current, which gives the same model), else read, made current (a model of an older
    /// verifier is made again from its references and stored so: `SignatureVerifier.current`) and
    /// remembered.
    private func model(row rowID: UUID) async throws -> SignatureVerifier.Prepared? {
        if let prepared = preparedModels.value(rowID) { return prepared }
        guard let text = try await records.model(id: rowID),
              let stored = try? JSONDecoder().decode(SignatureVerifier.Model.self, from: Data(text.utf8)) else { return nil }
        let verifier = self.verifier
        let prepared = try await ComputeThreads.pool.runIfActive { verifier.prepare(stored) }
        if prepared.model != stored {
            let remade = String(decoding: try JSONEncoder().encode(prepared.model), as: UTF8.self)
            try await records.replaceModel(id: rowID, from: text, with: remade)
        }
        preparedModels.insert(prepared, for: rowID)
        return prepared
    }

    /// The acceptance threshold of an app: its own, else the server's.
    package func threshold(of app: AppRecord) -> Double { app.minSimilarity ?? settings.acceptAt }

    // MARK: Budgets

    /// `enrolledAccount` for `/login/` and `/opendocument/`, which answer whether an address is
    /// enrolled: each lookup costs a slot of the client address's and the app's lookup budgets
    /// first, so enumerating addresses is slow.
    package func lookUp(email: String, appID: UUID, origin: RequestOrigin) async throws -> AccountModel? {
        try await spendLookup(appID: appID, origin: origin)
        return try await enrolledAccount(email: email)
    }

    private func spendLookup(appID: UUID, origin: RequestOrigin) async throws {
        try await rateLimiter.hit("signature-lookup-ip", key: origin.ip ?? "unknown", limit: settings.lookupsPerIP, window: settings.attemptWindow)
        try await rateLimiter.hit("signature-lookup-app", key: appID.uuidString, limit: settings.lookupsPerApp, window: settings.attemptWindow)
    }

    // MARK: /login/

    package enum Presence: Equatable, Sendable { case enrolled, notEnrolled, unknown }

    /// Whether the email has an enrolment this app may use, from this type of device. An address
    /// without any Sign To Login enrolment is `unknown`, however it is known elsewhere.
    package func presence(email: String, deviceVersion: String?, appID: UUID, origin: RequestOrigin) async throws -> Presence {
        try await spendLookup(appID: appID, origin: origin)
        let device = DeviceClass(deviceVersion: deviceVersion).rawValue
        guard let enrolment = try await records.enrolment(email: email, appID: appID, deviceClass: device), enrolment.enrolled else { return .unknown }
        return enrolment.consented && enrolment.deviceModel != nil ? .enrolled : .notEnrolled
    }

    // MARK: /register/

    package struct Registration: Sendable {
        package var email: String
        package var userName: String
        package var signatures: [SignaturePoints]
        package var deviceVersion: String?
        /// The device facts stored with the model (os_version, device_version, resolution, time, location).
        package var device: [String: String]
        /// The optional profile (company_name, position, phone_number, birthday, sex, country, city, address, location).
        package var profile: [String: String]
        package var photo: Data?
        package var emailCode: String?
        /// The token of this client's unfinished enrolment (from its last `res 2`), if any.
        package var enrolmentToken: String?
        package var appID: UUID
    
        package init(email: String, userName: String, signatures: [SignaturePoints], deviceVersion: String? = nil, device: [String: String], profile: [String: String], photo: Data? = nil, emailCode: String? = nil, enrolmentToken: String? = nil, appID: UUID) {
            self.email = email
            self.userName = userName
            self.signatures = signatures
            self.deviceVersion = deviceVersion
            self.device = device
            self.profile = profile
            self.photo = photo
            self.emailCode = emailCode
            self.enrolmentToken = enrolmentToken
            self.appID = appID
        }
}

    package enum Enrolled: Equatable, Sendable {
        /// The model is made; a session of the account.
        case session(token: String)
        /// Not every signature fits: send `required` more, with `token` (the kept ones are this client's).
        case incomplete(required: Int, exist: Int, model: Int, incorrect: Int, token: String)
        /// A code went to the address: the same request with `email_code` enrols.
        case emailCodeSent
    }

    /// Enrolment (docs/security.md, "Sign To Login"). Every enrolment proves the address first:
    /// without `email_code` a code goes to it, for every address alike (whether it has an account
    /// says nothing then). With the code, the signatures are checked: the accepted ones of an
    /// unfinished enrolment are kept under a token only this client holds, for this app, address
    /// and type of device, and never mixed with anyone else's; a request with enough signatures
    /// stands on its own. The model is made in one transaction with the code spent, the address's
    /// confirmed owner (or a new account that takes the address over from an unproven claim), the
    /// app's consent and a session; models made before any proof are removed, and with them every
    /// session opened before this proof.
    package func register(_ r: Registration, origin: RequestOrigin) async throws -> Enrolled {
        let device = DeviceClass(deviceVersion: r.deviceVersion)
        let owner = try await account(email: r.email)
        guard let code = r.emailCode else {
            _ = try await codes.issueCode(.signatureEnrolment, to: .email(r.email), accountID: owner?.id, origin: origin) { code in
                composer.code(.signup, to: r.email, channel: .email, code: code, ttl: limits.codeTTL, language: origin.language)
            }
            return .emailCodeSent
        }
        let proof = try await verification.check(code: code, purpose: .signatureEnrolment, destination: r.email)

        // The signatures: this client's kept ones (by its token), and these; compared on a thread
        // of their own (45 comparisons for 10 signatures).
        let now = clock.now()
        let needed = settings.enrolmentSignatures
        let tokenHash = r.enrolmentToken.map(Secrets.sha256Hex)
        let kept = r.signatures.count >= needed ? [] : try await keptSignatures(tokenHash: tokenHash, email: r.email, device: device, appID: r.appID, now: now)
        let (verifier, fresh) = (self.verifier, r.signatures)
        let step = try await ComputeThreads.pool.runIfActive {
            verifier.continueEnrolment(kept: kept, new: fresh, needed: needed)
        }
        let model: SignatureVerifier.Model
        switch step {
        case .incomplete(let accepted, let required, let incorrect):
            // The client's own token when it brought kept signatures; a token of no batch of this
            // app, address and device (another client's, say) is neither used nor touched.
            let continued = kept.isEmpty ? nil : r.enrolmentToken
            let token = continued ?? secrets.token()
            try await keep(accepted, tokenHash: Secrets.sha256Hex(token), replacing: continued.map(Secrets.sha256Hex), email: r.email, device: device,
                           appID: r.appID, now: now)
            return .incomplete(required: required, exist: accepted.count, model: needed, incorrect: incorrect, token: token)
        case .model(let made):
            model = made
        }

        // Enrol: the account (made for a new address), its model, profile, consent and a session, at once.
        let modelText = String(decoding: try JSONEncoder().encode(model), as: UTF8.self)
        let deviceText = String(decoding: try JSONEncoder().encode(r.device), as: UTF8.self)
        let profileText = String(decoding: try JSONEncoder().encode(r.profile), as: UTF8.self)
        var photoKey: String?
        if let photo = r.photo { photoKey = try await blobs.put(photo).hex }
        let account: AccountModel
        var created: AccountModel?
        if let owner {
            account = owner
        } else {
            // The code proved the address: the new account's address is confirmed.
            let fresh = AccountModel(passwordHash: try await hasher.hash(secrets.token()), now: now)
            fresh.email = r.email
            fresh.emailConfirmedAt = now
            fresh.firstName = r.userName
            fresh.locale = origin.language.rawValue
            account = fresh
            created = fresh
        }
        let session: IssuedSession
        let (createdRow, photoBlob) = (created, photoKey)
        do {
            session = try await database.db.withTransaction { tx in
                try await verification.consume(proof, on: tx)
                if let createdRow {
                    try await proofs.dropUnverifiedClaim(on: .email(r.email), on: tx)
                    try await store.create(createdRow, on: tx)
                }
                let id = account.id!
                // A model nobody proved the address for may be a stranger's: it goes, and so does
                // every session opened before this proof (as a password reset ends them).
                let hadUnproven = try await records.enrol(
                    accountID: id, deviceClass: device.rawValue, appID: r.appID, model: modelText, device: deviceText, profile: profileText,
                    photoBlob: photoBlob, spendingBatch: kept.isEmpty ? nil : tokenHash, now: now, on: tx)
                if hadUnproven { try await sessions.revokeAll(accountID: id, on: tx) }
                let app = r.appID.uuidString.lowercased()
                if createdRow != nil {
                    try await audit.record(AuditEvent(.accountCreated, by: .account(id), account: id, origin: origin.audit,
                                                            detail: ["with": "signature enrolment", "app": app]), on: tx)
                }
                try await audit.record(AuditEvent(.signatureEnrolled, by: .account(id), account: id, origin: origin.audit,
                                                        detail: ["app": app, "device": device.rawValue]), on: tx)
                return try await sessions.create(accountID: id, methods: [.sig, .mail], device: r.deviceVersion.map { "Sign To Login (\($0))" } ?? "Sign To Login",
                                                 ip: origin.ip, on: tx)
            }
        } catch where error.isConstraintViolation {
            // The same address enrolled by a concurrent request: it has an owner now; the code is spent or not, ask again.
            throw GatehouseError.conflict(.emailTaken, "error.emailTaken")
        }
        return .session(token: session.token)
    }

    private func keptSignatures(tokenHash: String?, email: String, device: DeviceClass, appID: UUID, now: Date) async throws -> [SignaturePoints] {
        guard let tokenHash,
              let text = try await records.keptBatch(tokenHash: tokenHash, appID: appID, email: email, deviceClass: device.rawValue, now: now)
        else { return [] }
        return (try? JSONDecoder().decode([SignaturePoints].self, from: Data(text.utf8))) ?? []
    }

    private func keep(_ signatures: [SignaturePoints], tokenHash: String, replacing old: String?, email: String, device: DeviceClass,
                      appID: UUID, now: Date) async throws {
        let text = String(decoding: try JSONEncoder().encode(signatures), as: UTF8.self)
        let expires = now.addingTimeInterval(settings.enrolmentKeep)
        try await records.keepBatch(tokenHash: tokenHash, replacing: old, appID: appID, email: email, deviceClass: device.rawValue,
                                    accepted: text, now: now, expires: expires)
    }

    // MARK: /authenticate/

    package struct Attempt: Sendable {
        package var email: String
        package var signature: SignaturePoints
        package var deviceVersion: String?
        package var photo: Data?
        package var location: String?
        package var country: String?
        package var city: String?
        package var address: String?
        package var time: String?
        package var appID: UUID
        /// The app's acceptance threshold: an attempt at or above it signs the person in.
        package var threshold: Double
        /// The `sessionid` the app holds, if any: a session of this person makes the attempt
        /// count against that session's own budget, never the one strangers can spend.
        package var sessionToken: String?
    
        package init(email: String, signature: SignaturePoints, deviceVersion: String? = nil, photo: Data? = nil, location: String? = nil, country: String? = nil, city: String? = nil, address: String? = nil, time: String? = nil, appID: UUID, threshold: Double, sessionToken: String? = nil) {
            self.email = email
            self.signature = signature
            self.deviceVersion = deviceVersion
            self.photo = photo
            self.location = location
            self.country = country
            self.city = city
            self.address = address
            self.time = time
            self.appID = appID
            self.threshold = threshold
            self.sessionToken = sessionToken
        }
}

    package enum Authenticated: Equatable, Sendable {
        /// Scored and kept; `session` is a new session when the attempt passed the app's threshold
        /// and came without one of the person's sessions (a sign-in by signature).
        case scored(similarity: Double, signatureID: String, session: String?)
        case unknown
        case notEnrolled
        /// (Nearly) the same points as a reference or an earlier attempt: a copy, refused.
        case replayed
    }

    /// Scores an attempt against the account's model (the one of this type of device, else its
    /// newest) and keeps it for the history.
    ///
    /// Budgets, as the login throttle's: each attempt takes its slots first and gives them back
    /// when it passes the app's threshold, so only low scores (and replays) spend them. The
    /// slots: the client address's, and either the person's own session's (an app signed in as
    /// them) or the account's for this app (everyone else). A stranger's flood spends the second
    /// and never the first, so a person's signed-in device keeps working through it.
    ///
    /// Its statements run on the database's event loop (`EventLoopTaskExecutor`: each is sent,
    /// answered and followed on one thread), the verification on `ComputeThreads`.
    package func authenticate(_ a: Attempt, origin: RequestOrigin) async throws -> Authenticated {
        try await withTaskExecutorPreference(database.writerExecutor()) { try await score(a, origin: origin) }
    }

    private func score(_ a: Attempt, origin: RequestOrigin) async throws -> Authenticated {
        let window = settings.attemptWindow
        let ip = RateLimiter.Budget("signature-ip", key: origin.ip ?? "unknown", limit: settings.attemptsPerIP)
        let device = DeviceClass(deviceVersion: a.deviceVersion)
        // The address's budget and the account's (or its session's) are counted in one statement once the
        // enrolment is read; an address with no such enrolment (or no consent) counts against its own alone.
        let enrolment = try await records.enrolment(email: a.email, appID: a.appID, deviceClass: device.rawValue,
                                                    recentAttempts: settings.replayHistory)
        guard let enrolment, enrolment.enrolled, enrolment.consented else {
            try await rateLimiter.hit([ip], window: window)
            return enrolment?.enrolled == true ? .notEnrolled : .unknown
        }
        let id = enrolment.accountID
        var own: SessionWithAccount?
        if let token = a.sessionToken, let found = try await sessions.authenticate(token: token), found.account.id == id { own = found }
        let budget = own.map { RateLimiter.Budget("signature-session", key: $0.session.id.uuidString, limit: settings.attemptsPerSession) }
            ?? RateLimiter.Budget("signature-account", key: "\(id):\(a.appID)", limit: settings.attemptsPerAccount)
        try await rateLimiter.hit([ip, budget], window: window)
        let slots = [(name: ip.name, key: ip.key), (name: budget.name, key: budget.key)]
        // The model of this type of device, else the newest (an attempt without a device_version: the newest).
        guard let row = (a.deviceVersion == nil ? nil : enrolment.deviceModel) ?? enrolment.newestModel,
              let prepared = try await model(row: row) else {
            try? await rateLimiter.release(slots, window: window)
            return .notEnrolled
        }
        let earlier = try await recentAttempts(accountID: id, read: enrolment.recentFingerprints)
        let (verifier, detector, signature) = (self.verifier, ReplayDetector(threshold: settings.replayDistance), a.signature)
        let scored: (similarity: Double, fingerprint: String, points: String)? = try await ComputeThreads.pool.runIfActive {
            let fingerprint = detector.fingerprint(signature)
            let history = prepared.model.references.map(detector.fingerprint) + earlier
            if detector.replayed(fingerprint, among: history) != nil { return nil }
            return (verifier.similarity(signature, to: prepared), detector.encoded(fingerprint), signature.json)
        }
        guard let (raw, fingerprint, points) = scored else { return .replayed }
        let similarity = (raw * 100).rounded() / 100
        let attemptID = Self.randomHex(bytes: 10)
        var photoKey: String?
        if let photo = a.photo { photoKey = try await blobs.put(photo).hex }
        let passed = similarity >= a.threshold
        let (photoBlob, signedIn, now) = (photoKey, own != nil, clock.now())
        let keep: @Sendable (any GatehouseDatabase) async throws -> Void = { db in
            try await self.records.insertAttempt(
                id: attemptID, accountID: id, appID: a.appID, similarity: similarity, points: points, fingerprint: fingerprint, photoBlob: photoBlob,
                location: a.location, country: a.country, city: a.city, address: a.address, clientTime: a.time, now: now, on: db)
        }
        guard passed else {
            // One statement: nothing else to keep with it.
            try await keep(database.db)
            return .scored(similarity: similarity, signatureID: attemptID, session: nil)
        }
        // A pass gives its slots back, with the attempt and the session it may open.
        let session: IssuedSession? = try await database.db.withTransaction { tx in
            try await keep(tx)
            try await rateLimiter.release(slots, window: window, on: tx)
            guard !signedIn else { return nil }
            // A sign-in by signature.
            try await audit.record(AuditEvent(.loginSucceeded, by: .account(id), account: id, origin: origin.audit,
                                                    detail: ["with": "signature", "app": a.appID.uuidString.lowercased()]), on: tx)
            return try await sessions.create(accountID: id, methods: [.sig], device: a.deviceVersion.map { "Sign To Login (\($0))" } ?? "Sign To Login",
                                             ip: origin.ip, on: tx)
        }
        return .scored(similarity: similarity, signatureID: attemptID, session: session?.token)
    }

    /// The fingerprints of the account's latest attempts, which a new attempt must not copy: `read`
    /// with the enrolment when it has them all, else read again (one made before fingerprints were
    /// kept is fingerprinted from its points).
    private func recentAttempts(accountID: UUID, read: [String]?) async throws -> [ReplayDetector.Fingerprint] {
        let detector = ReplayDetector(threshold: settings.replayDistance)
        if let read { return read.compactMap(detector.decoded) }
        return try await records.recentAttemptFingerprints(accountID: accountID, limit: settings.replayHistory).compactMap { row in
            if let text = row.fingerprint, let fingerprint = detector.decoded(text) { return fingerprint }
            guard let text = row.points, let points = try? JSONDecoder().decode(SignaturePoints.self, from: Data(text.utf8)) else { return nil }
            return detector.fingerprint(points)
        }
    }

    /// `bytes` random bytes as lower-case hex (ids shown to clients: ≥ 80 bits).
    package static func randomHex(bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<bytes).map { _ in UInt8.random(in: 0...255, using: &generator) }.hexString
    }

    package init(database: DatabaseProvider, records: SignToLoginStore, clock: GatehouseClock, settings: GatehouseConfiguration.Signature,
                 limits: GatehouseConfiguration.Limits, hasher: PasswordHasher, sessions: SessionService, verification: VerificationService,
                 composer: MessageComposer, secrets: Secrets, rateLimiter: RateLimiter, blobs: any BlobStore, codes: CodeIssuer, proofs: AddressProofs,
                 audit: AuditLog) {
        self.database = database
        self.records = records
        self.clock = clock
        self.settings = settings
        self.limits = limits
        self.hasher = hasher
        self.sessions = sessions
        self.verification = verification
        self.composer = composer
        self.secrets = secrets
        self.rateLimiter = rateLimiter
        self.blobs = blobs
        self.codes = codes
        self.proofs = proofs
        self.audit = audit
        self.preparedModels = BoundedCache(capacity: settings.modelCache)
    }
}
