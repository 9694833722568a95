import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import GatehouseSignToLogin
import GatehouseVerifier
import Hummingbird
import NIOCore

/// The spec's endpoints of the Sign To Login service (the Sign To Login spec,
/// "Требования к серверному API"): `/register/`, `/login/`, `/authenticate/`. Bodies as JSON,
/// urlencoded or multipart forms alike; every answer is a JSON object whose `res` is a string,
/// with the spec's texts where it gives them and the codes of docs/sign-to-login.md where
/// it does not. The API key is checked first, on every endpoint.
package struct SignToLoginController: Sendable {
    package let apps: AppsService
    package let signatures: SignatureService
    package let documents: SignatureDocuments
    package let signature: GatehouseConfiguration.Signature
    package let edge: SurfaceEdge

    private var settings: GatehouseConfiguration.Signature { signature }

    package func addRoutes(to router: some RouterMethods<GatehouseRequestContext>) {
        // The router takes a path with or without its trailing slash alike.
        let endpoints = SignToLoginAPI.Endpoints.self
        router.route(endpoints.register, use: register)
        router.route(endpoints.login, use: login)
        router.route(endpoints.authenticate, use: authenticate)
        router.route(endpoints.saveDocument, use: saveDocument)
        router.route(endpoints.openDocument, use: openDocument)
        router.route(endpoints.photo, use: photo)
        router.route(endpoints.history, use: historyPage)
    }

    // MARK: Answers

    /// An answer on the wire: its members in the spec's order (`res` first), with `status`.
    package static func answer(_ answer: SignToLoginAnswer, status: HTTPResponse.Status = .ok) -> Response {
        do {
            return JSONResponse.make(text: try OrderedJSONEncoder.encode(answer), status: status)
        } catch {
            // Only a similarity that is not a number could fail; the verifier never gives one.
            return JSONResponse.make(text: #"{"res":"10","error":"The answer could not be written"}"#, status: status)
        }
    }

    package static func invalid(_ message: String) -> Response {
        answer(.refused(.invalidInput, message))
    }

    /// A request read with its app, or the answer that ends it.
    package enum Opened {
        case success((SignatureRequest, AppRecord))
        case failure(Response)
    }

    /// A value, or the answer that refuses it.
    package enum Checked<Value> {
        case success(Value)
        case failure(Response)
    }

    /// Reads the request and checks its key; an answer instead when either fails.
    private func open(_ request: Request) async -> Opened {
        let body: SignatureRequest
        do {
            body = try await SignatureRequest.read(request, maxBytes: settings.maxBodyBytes)
        } catch SignatureRequest.Failure.tooLarge {
            return .failure(Self.answer(.refused(.tooLarge, "The request is too large (at most \(settings.maxBodyBytes) bytes)")))
        } catch {
            return .failure(Self.invalid("The request body could not be read: send JSON, a urlencoded or a multipart form"))
        }
        let key = body.text("apikey") ?? ""
        do {
            guard let app = try await apps.enabledApp(key: key) else {
                let shown = key.count > 100 ? String(key.prefix(100)) + "…" : key
                return .failure(Self.answer(.refused(.keyRefusedOrDocumentChanged, "Application with key '\(shown)' is not registered or disabled")))
            }
            return .success((body, app))
        } catch {
            return .failure(Self.answer(.refused(.keyRefusedOrDocumentChanged, "Application with key '' is not registered or disabled")))
        }
    }

    private func email(_ body: SignatureRequest) -> String? {
        body.text("email").flatMap(EmailAddress.normalize)
    }

    private func origin(_ request: Request, _ context: GatehouseRequestContext) -> RequestOrigin {
        RequestOrigin(ip: request.clientIP(context: context, trustForwardedFor: edge.trustForwardedFor),
                      language: AppLanguage.negotiate(request.headers[.acceptLanguage], fallback: .en), device: request.headers[.userAgent],
                      requestID: context.requestID)
    }

    // MARK: Signatures on the wire

    /// One signature object: `signature_contents` (points with `x` and `y`, numbers or strings;
    /// `p` ignored), `dot_count` or `dot count` checked only for being plausible.
    package func points(_ value: JSONValue?) -> SignaturePoints? {
        guard let value, case .array(let raw)? = value["signature_contents", "signature contents", "points"] else { return nil }
        guard !raw.isEmpty, raw.count <= settings.maxPointsPerSignature else { return nil }
        var xs: [Double] = [], ys: [Double] = []
        for point in raw {
            guard let x = point["x"]?.number, let y = point["y"]?.number, abs(x) < 1e6, abs(y) < 1e6 else { return nil }
            xs.append(x)
            ys.append(y)
        }
        if let count = value["dot_count", "dot count", "dotcount"]?.number {
            guard count >= 0, count <= Double(settings.maxPointsPerSignature) * 2 else { return nil }
        }
        return SignaturePoints(x: xs, y: ys)
    }

    /// A structured field as the JSON text stored with the model (`location`, `resolution`).
    private func jsonText(_ body: SignatureRequest, _ name: String) -> String? {
        guard let value = body.structured(name) ?? body.fields[name] else { return nil }
        switch value {
        case .object(let members):
            let pairs = members.keys.sorted().compactMap { key in members[key]?.text.map { "\"\(key)\":\($0)" } }
            return "{" + pairs.joined(separator: ",") + "}"
        default:
            return value.text
        }
    }

    private func photo(_ body: SignatureRequest) -> Checked<Data?> {
        guard let bytes = body.photo() else {
            return body.text("photo") == nil && body.files["photo"] == nil ? .success(nil) : .failure(Self.invalid("photo is not an image"))
        }
        guard bytes.count <= settings.photoMaxBytes else {
            return .failure(Self.answer(.refused(.tooLarge, "The photo is too large (at most \(settings.photoMaxBytes) bytes)")))
        }
        guard let format = ImageFormat.allCases.first(where: { $0.matches(bytes) }), ImageStructure.isComplete(bytes, format: format) else {
            return .failure(Self.invalid("photo is not an image (PNG, JPEG, GIF or WebP)"))
        }
        return .success(bytes)
    }

    /// The first of the spec's required parameters (marked `*`) the request lacks, answered `res 10` naming it.
    static func missing(_ names: [String], in body: SignatureRequest) -> Response? {
        for name in names where body.text(name) == nil && body.structured(name) == nil && body.fields[name] == nil {
            return invalid("\(name) is missing (the spec marks it required)")
        }
        return nil
    }

    /// The first optional profile field whose value the profile's rules refuse (the spec: only allowed characters).
    static func refusedProfileField(_ body: SignatureRequest) -> Response? {
        for field in SignatureProfileRules.Field.allCases where field != .userName {
            guard let value = body.text(field.rawValue) else { continue }
            let checked = field == .sex ? value.lowercased() : value
            guard SignatureProfileRules.isValid(checked, for: field) else {
                return invalid("\(field.rawValue) holds characters or a form it does not take" + (field == .birthday ? " (DD.MM.YYYY, a real date)" : field == .sex ? " (male or female)" : ""))
            }
        }
        return nil
    }

    /// The spec's dates: `DD.MM.YYYY HH:MM:SS` (or a date alone).
    package static func isSpecTime(_ text: String) -> Bool { SignToLoginAPI.isSpecTime(text) }

    private func rateLimited(_ error: GatehouseError) -> Response? {
        guard case .rateLimited(let seconds) = error.kind else { return nil }
        var response = Self.answer(.init(res: .rateLimited, error: "Too many attempts; try again in \(seconds) s", retryAfter: seconds))
        response.headers[.retryAfter] = String(seconds)
        return response
    }

    // MARK: Endpoints

    @Sendable package func login(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let (body, app): (SignatureRequest, AppRecord)
        switch await open(request) {
        case .failure(let answer): return answer
        case .success(let opened): (body, app) = opened
        }
        guard let email = email(body) else { return Self.invalid("email is missing or not an email address") }
        if let missing = Self.missing(["os_version", "device_version"], in: body) { return missing }
        do {
            switch try await signatures.presence(email: email, deviceVersion: body.text("device_version"), appID: app.id, origin: origin(request, context)) {
            case .unknown: return Self.answer(.refused(.signaturesIncompleteOrUnknownUser, "User does not exist"))
            case .notEnrolled: return Self.answer(.refused(.notEnrolledForDevice, "Registration is required for this type of device"))
            case .enrolled: return Self.answer(.init(res: .ok))
            }
        } catch let error as GatehouseError {
            if let limited = rateLimited(error) { return limited }
            throw error
        }
    }

    @Sendable package func register(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let (body, app): (SignatureRequest, AppRecord)
        switch await open(request) {
        case .failure(let answer): return answer
        case .success(let opened): (body, app) = opened
        }
        guard let email = email(body) else { return Self.invalid("email is missing or not an email address") }
        guard let userName = body.text("user_name"), SignatureProfileRules.isValid(userName, for: .userName) else {
            return Self.invalid("user_name is missing, or not a name (letters, spaces and .'- only, at most \(SignatureProfileRules.maxLength(.userName)) characters)")
        }
        guard let time = body.text("time"), Self.isSpecTime(time) else { return Self.invalid("time is missing or not DD.MM.YYYY HH:MM:SS") }
        if let missing = Self.missing(["os_version", "device_version", "resolution", "pressure"], in: body) { return missing }
        if let refused = Self.refusedProfileField(body) { return refused }
        guard case .array(let raw)? = body.structured("signatures"), !raw.isEmpty, raw.count <= settings.enrolmentSignatures * 2 else {
            return Self.invalid("signatures is missing or not an array of at most \(settings.enrolmentSignatures * 2) signatures")
        }
        var parsed: [SignaturePoints] = []
        for (index, item) in raw.enumerated() {
            guard let points = points(item) else { return Self.invalid("signatures[\(index)] is not a signature: signature_contents of x and y") }
            parsed.append(points)
        }
        let photo: Data?
        switch self.photo(body) {
        case .failure(let answer): return answer
        case .success(let bytes): photo = bytes
        }
        var device: [String: String] = ["time": time]
        for name in ["os_version", "device_version"] { if let value = body.text(name) { device[name] = String(value.prefix(200)) } }
        for name in ["resolution", "location"] { if let value = jsonText(body, name) { device[name] = String(value.prefix(500)) } }
        var profile: [String: String] = ["user_name": userName]
        for name in ["company_name", "position", "phone_number", "birthday", "sex", "country", "city", "address"] {
            if let value = body.text(name) { profile[name] = String(value.prefix(500)) }
        }
        if let location = jsonText(body, "location") { profile["location"] = String(location.prefix(500)) }
        let registration = SignatureService.Registration(
            email: email, userName: userName, signatures: parsed, deviceVersion: body.text("device_version"), device: device,
            profile: profile, photo: photo, emailCode: body.text("email_code"), enrolmentToken: body.text("enrolment_token").map { String($0.prefix(200)) },
            appID: app.id)
        do {
            switch try await signatures.register(registration, origin: origin(request, context)) {
            case .session(let token):
                return Self.answer(.init(res: .ok, sessionid: token))
            case .incomplete(let required, let exist, let model, let incorrect, let token):
                // The spec's members, then the token that makes the kept signatures this client's.
                return Self.answer(.init(res: .signaturesIncompleteOrUnknownUser, error: "Not all signatures a valid", countRequired: required,
                                         countExist: exist, countModel: model, countIncorrect: incorrect, enrolmentToken: token))
            case .emailCodeSent:
                return Self.answer(.refused(.emailConfirmationRequired, "Email confirmation required: enter the code sent to \(email) as email_code"))
            }
        } catch let error as GatehouseError {
            if let limited = rateLimited(error) { return limited }
            switch error.code {
            case .accountLocked:
                return Self.answer(.refused(.accountLocked, error.message.render(.en)))
            case .secondFactorRequired:
                return Self.answer(.refused(.secondFactorRequired, error.message.render(.en)))
            case .invalidCode, .codeExpired, .codeAttemptsExhausted:
                return Self.answer(.refused(.invalidEmailCode, error.message.render(.en)))
            case .emailTaken:
                return Self.answer(.refused(.emailConfirmationRequired, "Email confirmation required: send the request again"))
            default:
                return Self.invalid(error.message.render(.en))
            }
        }
    }

    @Sendable package func authenticate(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let (body, app): (SignatureRequest, AppRecord)
        switch await open(request) {
        case .failure(let answer): return answer
        case .success(let opened): (body, app) = opened
        }
        guard let email = email(body) else { return Self.invalid("email is missing or not an email address") }
        guard let signature = points(body.structured("signature")) else {
            return Self.invalid("signature is missing or not a signature: signature_contents of x and y")
        }
        let photo: Data?
        switch self.photo(body) {
        case .failure(let answer): return answer
        case .success(let bytes): photo = bytes
        }
        guard let time = body.text("time"), Self.isSpecTime(time) else { return Self.invalid("time is missing or not DD.MM.YYYY HH:MM:SS") }
        if let missing = Self.missing(["resolution", "pressure"], in: body) { return missing }
        let attempt = SignatureService.Attempt(
            email: email, signature: signature, deviceVersion: body.text("device_version"), photo: photo,
            location: jsonText(body, "location").map { String($0.prefix(500)) }, country: body.text("country").map { String($0.prefix(200)) },
            city: body.text("city").map { String($0.prefix(200)) }, address: body.text("address").map { String($0.prefix(500)) },
            time: body.text("time"), appID: app.id, threshold: signatures.threshold(of: app), sessionToken: body.text("sessionid"))
        do {
            switch try await signatures.authenticate(attempt, origin: origin(request, context)) {
            case .scored(let similarity, let id, let session):
                return Self.answer(.init(res: .ok, similarity: (similarity * 100).rounded() / 100, signatureid: id, sessionid: session))
            case .unknown: return Self.answer(.refused(.signaturesIncompleteOrUnknownUser, "User does not exist"))
            case .notEnrolled: return Self.answer(.refused(.notEnrolledForDevice, "Registration is required for this type of device"))
            case .replayed:
                return Self.answer(.refused(.signatureReplayed, "Signature replayed: it copies a signature already sent; sign again"))
            }
        } catch let error as GatehouseError {
            if let limited = rateLimited(error) { return limited }
            if error.code == .accountLocked { return Self.answer(.refused(.accountLocked, error.message.render(.en))) }
            if error.code == .secondFactorRequired { return Self.answer(.refused(.secondFactorRequired, error.message.render(.en))) }
            throw error
        }
    }

    // MARK: Documents

    /// A document hash as apps send them: at most 256 printable characters.
    private func hash(_ body: SignatureRequest, _ name: String) -> String? {
        guard let value = body.text(name), value.count <= 256, value.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else { return nil }
        return value
    }

    @Sendable package func saveDocument(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let (body, app): (SignatureRequest, AppRecord)
        switch await open(request) {
        case .failure(let answer): return answer
        case .success(let opened): (body, app) = opened
        }
        guard let email = email(body) else { return Self.invalid("email is missing or not an email address") }
        guard let documentHash = hash(body, "document_hash") else { return Self.invalid("document_hash is missing or not a hash") }
        // Required, as the spec marks it: the hash of the document opened in the editor, empty when it is saved the first time.
        guard body.sent("previous_hash") else {
            return Self.invalid("previous_hash is missing: the hash of the document opened in the editor, or empty for its first save")
        }
        let previous = body.text("previous_hash")
        if previous != nil, hash(body, "previous_hash") == nil { return Self.invalid("previous_hash is not a hash") }
        var ids: [String] = []
        switch body.structured("signatures") {
        case nil, .null?: break
        case .array(let items)?:
            for item in items {
                guard let id = item.text?.lowercased(), id.count <= 64, id.allSatisfy(\.isHexDigit) else {
                    return Self.invalid("signatures holds something that is not a signature id")
                }
                ids.append(id)
            }
        default:
            if body.text("signatures") != nil { return Self.invalid("signatures is not an array of signature ids") }
        }
        guard ids.count <= 100, Set(ids).count == ids.count else { return Self.invalid("signatures names a signature twice, or more than 100") }
        let documentID = body.text("documentid")
        if let documentID, documentID.count > 64 || !documentID.allSatisfy(\.isHexDigit) { return Self.invalid("documentid is not a document id") }
        let save = SignatureDocuments.Save(email: email, sessionToken: body.text("sessionid"), previousHash: previous, documentHash: documentHash,
                                           signatureIDs: ids, documentID: documentID, appID: app.id, threshold: signatures.threshold(of: app))
        switch try await documents.save(save) {
        case .saved(let id): return Self.answer(.init(res: .ok, documentid: id))
        case .sessionRefused:
            return Self.answer(.refused(.sessionRequired, "A session of this user is required (sessionid): sign in again"))
        case .foreignSignature(let id):
            return Self.invalid("signature '\(id)' is not a signature of this user: an unused attempt through this app scoring at least the signing floor")
        case .conflict:
            return Self.answer(.refused(.documentConflict, "Document has been saved from this version already: open it again"))
        }
    }

    @Sendable package func openDocument(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let (body, app): (SignatureRequest, AppRecord)
        switch await open(request) {
        case .failure(let answer): return answer
        case .success(let opened): (body, app) = opened
        }
        guard let email = email(body) else { return Self.invalid("email is missing or not an email address") }
        guard let documentID = body.text("documentid") else { return Self.invalid("documentid is missing") }
        guard let documentHash = hash(body, "document_hash") else { return Self.invalid("document_hash is missing or not a hash") }
        let opened: SignatureDocuments.Opened
        do {
            opened = try await documents.open(email: email, documentID: documentID, documentHash: documentHash, appID: app.id,
                                              origin: origin(request, context))
        } catch let error as GatehouseError {
            if let limited = rateLimited(error) { return limited }
            throw error
        }
        switch opened {
        case .unknownUser: return Self.answer(.refused(.signaturesIncompleteOrUnknownUser, "User does not exist"))
        case .notFound: return Self.answer(.refused(.documentNotFound, "Document does not exist"))
        case .current(let history): return Self.answer(.init(res: .ok, history: history.map(Self.entry)))
        case .changed(let history):
            return Self.answer(.init(res: .keyRefusedOrDocumentChanged, error: "Document has been updated outside of the application", history: history.map(Self.entry)))
        }
    }

    /// One history entry on the wire (similarity with two decimals, times the spec's way in UTC).
    package static func entry(_ entry: SignatureDocuments.Entry) -> SignToLoginHistoryEntry {
        SignToLoginHistoryEntry(
            name: entry.signer, similarity: (entry.similarity * 100).rounded() / 100, warning: entry.lowMatch,
            time: SignToLoginAPI.specTime(entry.signedAt, timeZone: TimeZone(identifier: "UTC")!), clientTime: entry.clientTime,
            location: entry.location, country: entry.country, city: entry.city, address: entry.address, photo: entry.photoURL,
            signatureID: entry.signatureID, documentHash: entry.documentHash)
    }

    @Sendable package func photo(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        guard let id = context.parameters.get("id"), let bytes = try await documents.photo(signatureID: id.lowercased()),
              let format = ImageFormat.allCases.first(where: { $0.matches(bytes) }) else {
            return Self.answer(.refused(.documentNotFound, "No such photo"), status: .notFound)
        }
        return Response(status: .ok, headers: [
            .contentType: format.rawValue, .cacheControl: "private, max-age=3600", .init("X-Content-Type-Options")!: "nosniff",
            .contentSecurityPolicy: "default-src 'none'; sandbox; frame-ancestors 'none'",
        ], body: .init(byteBuffer: ByteBuffer(data: bytes)))
    }

    /// `/documents/?documentid=…`: the history page a signed PDF links to.
    @Sendable package func historyPage(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let language = AppLanguage.negotiate(request.headers[.acceptLanguage], fallback: .en)
        let raw = request.uri.queryParameters.get("documentid") ?? ""
        let id = raw.lowercased()
        guard !id.isEmpty, id.count <= 64, id.allSatisfy(\.isHexDigit), let entries = try await documents.exists(documentID: id) ? documents.history(documentID: id) : nil else {
            return DocumentHistoryPage.response(found: false, documentID: String(id.filter(\.isHexDigit).prefix(64)), entries: [], language: language,
                                                storeURL: settings.appStoreURL)
        }
        return DocumentHistoryPage.response(found: true, documentID: id, entries: entries, language: language, storeURL: settings.appStoreURL)
    }

    package init(apps: AppsService, signatures: SignatureService, documents: SignatureDocuments, signature: GatehouseConfiguration.Signature, edge: SurfaceEdge) {
        self.apps = apps
        self.signatures = signatures
        self.documents = documents
        self.signature = signature
        self.edge = edge
    }
}
