import Foundation
import GatehouseAPI
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the app tells the server about the device (the Sign To Login spec: "тип устройства,
/// версия iOS, текущая дата", the screen, and the place only when the person allows it).
public struct DeviceFacts: Equatable, Sendable {
    /// `os_version`, e.g. "18.1".
    public var osVersion: String
    /// `device_version`, e.g. "iPhone16,2" or "iPad13,4": the server keeps one model per type of device by it.
    public var deviceModel: String
    /// `resolution`, in points.
    public var screenWidth: Double
    /// `resolution`'s height, in points.
    public var screenHeight: Double
    /// `location`, `country`, `city`, `address`: nil unless the app has the person's permission.
    public var location: (latitude: Double, longitude: Double)?
    /// The country, by reverse geocoding.
    public var country: String?
    /// The city.
    public var city: String?
    /// The street address.
    public var address: String?

    /// The facts of a device; the place only when the person allows it.
    public init(osVersion: String, deviceModel: String, screenWidth: Double, screenHeight: Double,
                location: (latitude: Double, longitude: Double)? = nil, country: String? = nil, city: String? = nil, address: String? = nil) {
        self.osVersion = osVersion
        self.deviceModel = deviceModel
        self.screenWidth = screenWidth
        self.screenHeight = screenHeight
        self.location = location
        self.country = country
        self.city = city
        self.address = address
    }

    /// Equal when every fact is.
    public static func == (a: DeviceFacts, b: DeviceFacts) -> Bool {
        a.osVersion == b.osVersion && a.deviceModel == b.deviceModel && a.screenWidth == b.screenWidth && a.screenHeight == b.screenHeight
            && a.location?.latitude == b.location?.latitude && a.location?.longitude == b.location?.longitude
            && a.country == b.country && a.city == b.city && a.address == b.address
    }
}

/// Where the device facts come from: UIDevice and UIScreen (and Core Location when allowed) in an
/// app; a fixed value in tests and the terminal demo.
public protocol DeviceFactsProvider: Sendable {
    /// The device's facts now (the place only when the person allows it).
    func facts() async -> DeviceFacts
}

/// A provider that always answers the same facts.
public struct FixedDeviceFacts: DeviceFactsProvider {
    /// The facts it answers.
    public let value: DeviceFacts
    /// A provider of `value`.
    public init(_ value: DeviceFacts) { self.value = value }
    /// The same facts, every time.
    public func facts() async -> DeviceFacts { value }
}

/// One signature's points in the spec's order (pen-down points, x and y in points).
public typealias SignaturePointList = [(x: Double, y: Double)]

/// The person's profile for `/register/` (the spec's form; only email and user name are required).
/// Codable without the photo: what an app remembers of the person between launches.
public struct SignToLoginProfile: Equatable, Sendable, Codable {
    /// The address (required): the person's identity.
    public var email: String
    /// The name (required): letters, spaces and `.'-`.
    public var userName: String
    /// A phone number with the country code.
    public var phone: String?
    /// The company.
    public var company: String?
    /// The position in the company.
    public var position: String?
    /// `DD.MM.YYYY`.
    public var birthday: String?
    /// "male" or "female".
    public var sex: String?
    /// A JPEG or PNG of the person.
    public var photo: Data?

    /// A profile: the email and name, and the optional fields.
    public init(email: String, userName: String, phone: String? = nil, company: String? = nil, position: String? = nil,
                birthday: String? = nil, sex: String? = nil, photo: Data? = nil) {
        self.email = email
        self.userName = userName
        self.phone = phone
        self.company = company
        self.position = position
        self.birthday = birthday
        self.sex = sex
        self.photo = photo
    }

    enum CodingKeys: String, CodingKey {
        case email, userName, phone, company, position, birthday, sex
    }
}

/// One signing in a document's history (`/opendocument/`).
public typealias DocumentHistoryEntry = SignToLoginHistoryEntry

/// What went wrong, typed from the server's `res` (docs/sign-to-login.md).
public enum SignToLoginError: Error, Equatable, Sendable {
    /// `res 1`: the app's API key is unknown or the app disabled.
    case applicationRefused(message: String)
    /// `res 10`: the server could not read a field (its message names it).
    case invalidInput(message: String)
    /// `res 11`: the body or the photo is too large.
    case tooLarge(message: String)
    /// `res 12`: too many attempts; try again after `retryAfter` seconds.
    case rateLimited(retryAfter: Int?)
    /// `res 14`: the email code is wrong, expired or used up.
    case invalidEmailCode(message: String)
    /// `res 17`: the signature copies one the server has already seen (a replay); sign again.
    case signatureReplayed(message: String)
    /// `res 18`: saving a document needs the person's session, and the client holds none that
    /// works (it was never made, or it ended): sign in by signature again.
    case sessionRequired(message: String)
    /// The request got no answer.
    case transport(String)
    /// An answer this SDK does not understand (with the HTTP status).
    case unexpected(status: Int, body: String)
}

/// The client of the Sign To Login service's five calls (docs/sign-to-login.md), for an
/// app registered with an API key. JSON bodies; every answer's `res` becomes a typed result or a
/// `SignToLoginError`.
///
/// The client holds what makes a call the person's own: the session that `register` or a passing
/// `authenticate` answers (kept in `sessionStore`, sent with `saveDocument` and `authenticate`), and
/// the token of an unfinished enrolment (in memory, sent with the missing signatures).
public struct SignToLoginClient: Sendable {
    /// The server's address.
    public let server: URL
    /// The app's API key (the developer console's).
    public let apiKey: String
    let transport: any HTTPTransport
    let device: any DeviceFactsProvider
    let now: @Sendable () -> Date
    /// Where the person's session is kept (Keychain or a 0600 file in an app: `DefaultSessionStore.make(name:)`).
    public let sessionStore: any SessionStore
    private let enrolment = EnrolmentTokens()

    /// A client of `server`'s Sign To Login endpoints for the app whose key is `apiKey`, telling the server `device`'s facts.
    ///
    /// - Parameters:
    ///   - sessionStore: keeps the session between launches; memory only by default.
    public init(server: URL, apiKey: String, device: any DeviceFactsProvider, transport: any HTTPTransport = URLSessionTransport(),
                sessionStore: any SessionStore = InMemorySessionStore(), now: @escaping @Sendable () -> Date = Date.init) {
        self.server = server
        self.apiKey = apiKey
        self.device = device
        self.transport = transport
        self.sessionStore = sessionStore
        self.now = now
    }

    /// Whether the client holds a session of the person (from `register` or a passing `authenticate`).
    public var hasSession: Bool { (try? sessionStore.load()) != nil }

    /// The tokens of unfinished enrolments, by email: the server keeps accepted signatures only
    /// for the client that holds the token.
    final class EnrolmentTokens: @unchecked Sendable {
        private let lock = NSLock()
        private var tokens: [String: String] = [:]
        subscript(email email: String) -> String? {
            get { lock.withLock { tokens[email.lowercased()] } }
            set { lock.withLock { tokens[email.lowercased()] = newValue } }
        }
    }

    /// Keeps a session the server answered (it decides when it ends; a refused one is forgotten).
    private func keep(session token: String) {
        try? sessionStore.save(GatehouseSession(token: token, expiresAt: .distantFuture))
    }

    // MARK: The profile, with the person's session

    /// The `/v1` client on this server with the person's session (the one `register` or a passing
    /// `authenticate` answered): the profile's calls are the person's own.
    private var personal: GatehouseClient { GatehouseClient(baseURL: server, sessionStore: sessionStore, transport: transport, now: now) }

    /// The person's profile as the server keeps it (`GET /v1/me/signature-profile`): what
    /// `register` sent, edited since here or on the site's profile page.
    public func profile() async throws -> SignatureProfile {
        try await personal.call(V1.Signatures.profile)
    }

    /// Changes the optional fields given (an empty string clears one); each by `SignatureProfileRules`.
    public func updateProfile(_ change: SignatureProfileUpdate) async throws -> SignatureProfile {
        try await personal.call(V1.Signatures.updateProfile, change)
    }

    /// The profile's picture: its bytes and type.
    public func profilePhoto() async throws -> RawBody {
        try await personal.call(V1.Signatures.photo)
    }

    /// Sets the profile's picture (a PNG, JPEG, GIF or WebP image).
    public func setProfilePhoto(_ image: Data, contentType: String) async throws -> SignatureProfile {
        try await personal.call(V1.Signatures.setPhoto, RawBody(data: image, contentType: contentType))
    }

    /// Deletes the profile and every signature the server keeps of the person (their right): signing
    /// in by signature then needs a new enrolment. The account and the session stay.
    public func deleteProfile() async throws {
        let _: NoContent = try await personal.call(V1.Signatures.deleteProfile)
    }

    // MARK: The calls

    /// What `register` came to.
    public enum Registration: Equatable, Sendable {
        /// The model is made: a session of the account (`sessionid`).
        case registered(sessionID: String)
        /// `res 2`: send `required` more signatures in the same request (the server kept the others).
        case moreSignaturesNeeded(required: Int, exist: Int, model: Int, incorrect: Int)
        /// `res 13`: the address already has an account; a code went to it: repeat with `emailCode`.
        case emailCodeRequired
    }

    /// `/register/`: the profile and the signatures (10 at first; after `moreSignaturesNeeded`, the missing ones).
    public func register(_ profile: SignToLoginProfile, signatures: [SignaturePointList], emailCode: String? = nil) async throws -> Registration {
        var body = try await common(email: profile.email)
        body["user_name"] = profile.userName
        body["signatures"] = signatures.map(Self.wire)
        for (key, value) in [("phone_number", profile.phone), ("company_name", profile.company), ("position", profile.position),
                             ("birthday", profile.birthday), ("sex", profile.sex), ("email_code", emailCode)] {
            if let value { body[key] = value }
        }
        if let photo = profile.photo { body["photo"] = photo.base64EncodedString() }
        if let token = enrolment[email: profile.email] { body["enrolment_token"] = token }
        let answer = try await post(SignToLoginAPI.Path.register, body)
        switch answer.res {
        case .ok:
            guard let session = answer.body.sessionid else { throw answer.unexpected }
            enrolment[email: profile.email] = nil
            keep(session: session)
            return .registered(sessionID: session)
        case .signaturesIncompleteOrUnknownUser:
            enrolment[email: profile.email] = answer.body.enrolmentToken
            return .moreSignaturesNeeded(required: answer.body.countRequired ?? 0, exist: answer.body.countExist ?? 0,
                                         model: answer.body.countModel ?? 0, incorrect: answer.body.countIncorrect ?? 0)
        case .emailConfirmationRequired: return .emailCodeRequired
        default: throw answer.error
        }
    }

    /// What `login` says of the address on this type of device.
    public enum Presence: Equatable, Sendable {
        /// `res 0`: enrolled from this type of device: go to the signature.
        case enrolled
        /// `res 3`: the account exists without a model for this type of device: enrol.
        case enrolmentRequired
        /// `res 2`: no such user.
        case unknownUser
    }

    /// `/login/`: whether the email may sign in on this device.
    public func login(email: String) async throws -> Presence {
        let answer = try await post(SignToLoginAPI.Path.login, try await common(email: email))
        switch answer.res {
        case .ok: return .enrolled
        case .notEnrolledForDevice: return .enrolmentRequired
        case .signaturesIncompleteOrUnknownUser: return .unknownUser
        default: throw answer.error
        }
    }

    /// What `authenticate` came to.
    public enum Authentication: Equatable, Sendable {
        /// `res 0`: how alike (0…1, two decimals) and the attempt's id for `/savedocument/`.
        case scored(similarity: Double, signatureID: String)
        /// `res 3`: no model for this type of device, or not enrolled through this app: enrol.
        case enrolmentRequired
        /// `res 2`: no such user.
        case unknownUser
    }

    /// `/authenticate/`: scores a signature (the app decides what similarity is enough to show as a
    /// match; one at or above the server's threshold for the app signs the person in: the client
    /// keeps the session it answers).
    public func authenticate(email: String, signature: SignaturePointList, photo: Data? = nil) async throws -> Authentication {
        var body = try await common(email: email)
        body["signature"] = Self.wire(signature)
        if let photo { body["photo"] = photo.base64EncodedString() }
        if let session = try? sessionStore.load() { body["sessionid"] = session.token }
        let answer = try await post(SignToLoginAPI.Path.authenticate, body)
        switch answer.res {
        case .ok:
            guard let similarity = answer.body.similarity, let id = answer.body.signatureid else { throw answer.unexpected }
            if let session = answer.body.sessionid { keep(session: session) }
            return .scored(similarity: similarity, signatureID: id)
        case .notEnrolledForDevice: return .enrolmentRequired
        case .signaturesIncompleteOrUnknownUser: return .unknownUser
        default: throw answer.error
        }
    }

    /// What `saveDocument` came to.
    public enum Saved: Equatable, Sendable {
        /// `res 0`: the version is recorded, on this document.
        case saved(documentID: String)
        /// `res 15`: another save from the same version came first: open the document again.
        case conflict
        /// `res 2`: no such user.
        case unknownUser
    }

    /// `/savedocument/`: records a new version (`documentHash`, the SHA-256 of the saved file, lower-case
    /// hex) after `previousHash` (nil for a document not registered yet) with the signatures on it,
    /// as the signed-in person (the client's session). `documentID` names the document the file
    /// belongs to (its history link says it): a person who has not saved it before extends its
    /// chain only by naming it.
    public func saveDocument(email: String, documentHash: String, previousHash: String?, signatureIDs: [String],
                             documentID: String? = nil) async throws -> Saved {
        var body = try await common(email: email)
        body["document_hash"] = documentHash
        body["previous_hash"] = previousHash ?? ""  // required by the spec; empty for a document's first save
        if let documentID { body["documentid"] = documentID }
        body["signatures"] = signatureIDs
        if let session = try? sessionStore.load() { body["sessionid"] = session.token }
        let answer = try await post(SignToLoginAPI.Path.saveDocument, body)
        if answer.res == .sessionRequired { try? sessionStore.clear() }
        switch answer.res {
        case .ok:
            guard let id = answer.body.documentid else { throw answer.unexpected }
            return .saved(documentID: id)
        case .documentConflict: return .conflict
        case .signaturesIncompleteOrUnknownUser: return .unknownUser
        default: throw answer.error
        }
    }

    /// What `openDocument` says of the file.
    public enum Opened: Equatable, Sendable {
        /// The hash is the newest version's.
        case current(history: [DocumentHistoryEntry])
        /// `res 1`: the file changed outside the app since its last signing (the spec's warning).
        case changedOutside(history: [DocumentHistoryEntry])
        /// `res 16`: no such document.
        case notFound
        /// `res 2`: no such user.
        case unknownUser
    }

    /// `/opendocument/`: the document's history, and whether the file is the newest signed version.
    public func openDocument(email: String, documentID: String, documentHash: String) async throws -> Opened {
        var body = try await common(email: email)
        body["documentid"] = documentID
        body["document_hash"] = documentHash
        let answer = try await post(SignToLoginAPI.Path.openDocument, body)
        switch answer.res {
        case .ok: return .current(history: answer.body.history ?? [])
        case .keyRefusedOrDocumentChanged where answer.body.history != nil:
            return .changedOutside(history: answer.body.history ?? [])
        case .documentNotFound: return .notFound
        case .signaturesIncompleteOrUnknownUser: return .unknownUser
        default: throw answer.error
        }
    }

    /// The public history page a signed PDF links to.
    public func historyURL(documentID: String) -> URL { SignToLoginAPI.historyURL(server: server, documentID: documentID) }

    // MARK: Wire

    static func wire(_ signature: SignaturePointList) -> [String: Any] {
        ["pressure": 0, "dot_count": signature.count,
         "signature_contents": signature.map { ["x": ($0.x * 10).rounded() / 10, "y": ($0.y * 10).rounded() / 10, "p": 0] }]
    }

    /// What every call sends: the key, the email, the time and the device.
    private func common(email: String) async throws -> [String: Any] {
        let facts = await device.facts()
        var body: [String: Any] = [
            "apikey": apiKey, "email": email, "time": SignToLoginAPI.specTime(now()),
            "os_version": facts.osVersion, "device_version": facts.deviceModel, "pressure": 0,
            "resolution": ["width": facts.screenWidth, "height": facts.screenHeight],
        ]
        if let location = facts.location { body["location"] = ["lat": location.latitude, "lon": location.longitude] }
        for (key, value) in [("country", facts.country), ("city", facts.city), ("address", facts.address)] {
            if let value { body[key] = value }
        }
        return body
    }

    /// An answer as the server sent it: its status, the typed members, and the text (for errors).
    struct Answer {
        var status: Int
        var body: SignToLoginAnswer
        var text: String
        var res: SignToLoginAPI.Res { body.res }
        var unexpected: SignToLoginError { .unexpected(status: status, body: String(text.prefix(500))) }

        var error: SignToLoginError {
            let message = body.error ?? ""
            switch res {
            case .keyRefusedOrDocumentChanged: return .applicationRefused(message: message)
            case .invalidInput: return .invalidInput(message: message)
            case .tooLarge: return .tooLarge(message: message)
            case .rateLimited: return .rateLimited(retryAfter: body.retryAfter)
            case .invalidEmailCode: return .invalidEmailCode(message: message)
            case .signatureReplayed: return .signatureReplayed(message: message)
            case .sessionRequired: return .sessionRequired(message: message)
            default: return unexpected
            }
        }
    }

    private func post(_ path: String, _ body: [String: Any]) async throws -> Answer {
        var request = URLRequest(url: server.appendingPathComponent(String(path.dropFirst())))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.httpBody = try JSONSerialization.data(withJSONObject: body)
        let data: Data, response: HTTPURLResponse
        do {
            (data, response) = try await transport.send(request)
        } catch let error as GatehouseClientError {
            throw SignToLoginError.transport(error.message)
        } catch {
            throw SignToLoginError.transport(error.localizedDescription)
        }
        let text = String(decoding: data, as: UTF8.self)
        guard let answer = try? JSONDecoder().decode(SignToLoginAnswer.self, from: data) else {
            throw SignToLoginError.unexpected(status: response.statusCode, body: String(text.prefix(500)))
        }
        return Answer(status: response.statusCode, body: answer, text: text)
    }
}
