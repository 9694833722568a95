import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import GatehouseSignToLogin
import HTTPTypes
import Hummingbird

/// The Sign To Login profile page "on the site" (docs/sign-to-login.md, "The profile"): the person
/// signs in with a code mailed to their address (no password: most Sign To Login people never set
/// one), then reads their profile, edits its optional fields and picture, and may delete the
/// profile with their signatures. The session is one of the accounts core in an `HttpOnly`,
/// `SameSite=Strict` cookie for this path only, for 30 minutes; every form carries a CSRF token
/// equal to its own cookie's (a double submit another site can neither read nor set).
package struct SignatureProfilePageController: Sendable {
    package let profiles: SignatureProfiles
    package let sessions: SessionService
    package let signature: GatehouseConfiguration.Signature
    package let edge: SurfaceEdge


    package static let sessionCookie = "gh_profile"
    package static let csrfCookie = "gh_profile_csrf"
    private static let sessionSeconds = 1_800

    package func addRoutes(to router: Router<GatehouseRequestContext>) {
        router.route(ServerPages.SignatureProfile.page, use: show)
        router.route(ServerPages.SignatureProfile.requestCode, use: sendCode)
        router.route(ServerPages.SignatureProfile.signIn, use: signInPosted)
        router.route(ServerPages.SignatureProfile.save, use: savePosted)
        router.route(ServerPages.SignatureProfile.photoUpload, use: photoPosted)
        router.route(ServerPages.SignatureProfile.photo, use: photoImage)
        router.route(ServerPages.SignatureProfile.delete, use: deletePosted)
        router.route(ServerPages.SignatureProfile.signOut, use: signOutPosted)
    }

    // MARK: Cookies, forms, language

    private func cookie(_ name: String, _ value: String, maxAge: Int?) -> String {
        PageForm.cookie(name, value, path: "/signature-profile", sameSite: "Strict", secure: edge.secureCookies, maxAge: maxAge)
    }

    private func csrf(_ request: Request) -> (token: String, setCookie: [String]) {
        if let token = PageForm.cookies(request)[Self.csrfCookie], token.count == 43 { return (token, []) }
        let token = Secrets.systemToken()
        return (token, [cookie(Self.csrfCookie, token, maxAge: nil)])
    }

    private struct Refused: Error {}

    /// The posted form when its CSRF token is its cookie's.
    private func form(_ request: Request, limit: Int = 16_384) async throws -> (fields: [String: String], files: [String: (type: String?, bytes: Data)]) {
        let (fields, files) = try await PageForm.read(request, limit: limit)
        guard let sent = fields["csrf"], let expected = PageForm.cookies(request)[Self.csrfCookie], Secrets.constantTimeEquals(sent, expected) else {
            throw Refused()
        }
        return (fields, files)
    }

    private func person(_ request: Request) async throws -> SessionWithAccount? {
        guard let token = PageForm.cookies(request)[Self.sessionCookie], !token.isEmpty, token.count <= 100 else { return nil }
        return try await sessions.authenticate(token: token)
    }

    private func language(_ request: Request) -> AppLanguage { AppLanguage.negotiate(request.headers[.acceptLanguage], fallback: .ru) }

    private func origin(_ request: Request, _ context: GatehouseRequestContext) -> AuditOrigin {
        AuditOrigin(ip: request.clientIP(context: context, trustForwardedFor: edge.trustForwardedFor),
                    device: request.headers[.userAgent].map { String($0.prefix(200)) }, requestID: context.requestID)
    }

    /// The page's words in the reader's language, and what every state of it shows.
    private func values(_ language: AppLanguage, csrf: String) -> [String: Any] {
        func l(_ key: String) -> String { LocalizedText("page.sprofile.\(key)").render(language) }
        var values: [String: Any] = ["lang": language.rawValue, "csrf": csrf, "title": l("title")]
        for key in ["signInHint", "emailLabel", "sendCode", "codeLabel", "signIn", "placeLabel", "devicesLabel", "phoneLabel", "companyLabel",
                    "positionLabel", "birthdayLabel", "sexLabel", "maleLabel", "femaleLabel", "save", "photoLabel", "upload", "removePhoto",
                    "deleteTitle", "deleteHint", "deleteConfirm", "deleteButton", "signOut"] {
            values[key] = l(key)
        }
        return values
    }

    private var toPage: Response { Response(status: .seeOther, headers: [.location: ServerPages.SignatureProfile.page.path]) }
    private func see(done: String) -> Response { Response(status: .seeOther, headers: [.location: ServerPages.SignatureProfile.page.path + "?done=" + done]) }

    // MARK: Pages

    @Sendable func show(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let language = language(request)
        let (token, set) = csrf(request)
        var page = values(language, csrf: token)
        guard let person = try await person(request) else {
            page["askEmail"] = true
            return SignatureProfilePage.render(page, cookies: set)
        }
        if let done = request.uri.queryParameters.get("done"), ["saved", "photo"].contains(done) {
            page["done"] = LocalizedText("page.sprofile.done.\(done)").render(language)
        }
        return try await profilePage(person.session.accountID, page, language: language, cookies: set)
    }

    private func profilePage(_ account: UUID, _ base: [String: Any], language: AppLanguage, status: HTTPResponse.Status = .ok,
                             cookies: [String]) async throws -> Response {
        var page = base
        do {
            let profile = try await profiles.profile(of: account)
            page["profile"] = true
            page["name"] = profile.userName
            page["email"] = profile.email
            page["place"] = [profile.city, profile.country].compactMap { $0 }.joined(separator: ", ").nilIfEmpty as Any
            page["devices"] = profile.devices.isEmpty ? "—" : profile.devices.joined(separator: ", ")
            page["phone"] = profile.phoneNumber ?? ""
            page["company"] = profile.companyName ?? ""
            page["position"] = profile.position ?? ""
            page["birthday"] = profile.birthday ?? ""
            page["male"] = profile.sex == "male"
            page["female"] = profile.sex == "female"
            page["photo"] = profile.photoUrl != nil
        } catch let error as GatehouseError where error.code == .signatureProfileNotFound {
            page["error"] = error.message.render(language)
            page["askEmail"] = true
            return SignatureProfilePage.render(page, status: .notFound, cookies: cookies)
        }
        return SignatureProfilePage.render(page, status: status, cookies: cookies)
    }

    /// What both sign-in steps start with: the reader's language, the page's words and CSRF token,
    /// the posted email, and the origin a code is issued and checked for; or, for a form whose
    /// token is not its cookie's, the page that says the form expired.
    private struct SignInStep {
        var language: AppLanguage
        var page: [String: Any]
        var cookies: [String]
        var fields: [String: String]
        var email: String
        var origin: RequestOrigin
    }

    private func signInStep(_ request: Request, _ context: GatehouseRequestContext) async throws -> Result<SignInStep, ExpiredForm> {
        let language = language(request)
        let (token, set) = csrf(request)
        var page = values(language, csrf: token)
        guard let fields = try? await form(request).fields else {
            page["askEmail"] = true
            page["error"] = LocalizedText("page.sprofile.expired").render(language)
            return .failure(ExpiredForm(response: SignatureProfilePage.render(page, status: .forbidden, cookies: set)))
        }
        let origin = RequestOrigin(ip: request.clientIP(context: context, trustForwardedFor: edge.trustForwardedFor), language: language,
                                   device: "Sign To Login profile page", requestID: context.requestID)
        return .success(SignInStep(language: language, page: page, cookies: set, fields: fields,
                                   email: String((fields["email"] ?? "").prefix(254)), origin: origin))
    }

    private struct ExpiredForm: Error {
        var response: Response
    }

    /// The address: a code goes to it when it has a profile; the same page either way.
    @Sendable func sendCode(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        var step: SignInStep
        switch try await signInStep(request, context) {
        case .failure(let expired): return expired.response
        case .success(let started): step = started
        }
        step.page["email"] = step.email
        do {
            try await profiles.requestCode(email: step.email, origin: step.origin)
        } catch let error as GatehouseError {
            step.page["askEmail"] = true
            step.page["error"] = error.message.render(step.language)
            let status: HTTPResponse.Status = if case .rateLimited = error.kind { .tooManyRequests } else { .badRequest }
            return SignatureProfilePage.render(step.page, status: status, cookies: step.cookies)
        }
        step.page["askCode"] = true
        step.page["codeSent"] = LocalizedText("page.sprofile.codeSent", [step.email]).render(step.language)
        return SignatureProfilePage.render(step.page, cookies: step.cookies)
    }

    @Sendable func signInPosted(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        var step: SignInStep
        switch try await signInStep(request, context) {
        case .failure(let expired): return expired.response
        case .success(let started): step = started
        }
        do {
            let session = try await profiles.signIn(email: step.email, code: String((step.fields["code"] ?? "").prefix(12)), origin: step.origin)
            var response = toPage
            response.headers.append(HTTPField(name: .setCookie, value: cookie(Self.sessionCookie, session.token, maxAge: Self.sessionSeconds)))
            return response
        } catch let error as GatehouseError {
            step.page["askCode"] = true
            step.page["email"] = step.email
            step.page["codeSent"] = LocalizedText("page.sprofile.codeSent", [step.email]).render(step.language)
            step.page["error"] = error.message.render(step.language)
            let status: HTTPResponse.Status = if case .rateLimited = error.kind { .tooManyRequests } else { .unauthorized }
            return SignatureProfilePage.render(step.page, status: status, cookies: step.cookies)
        }
    }

    /// A signed-in form: the person and the fields (else the page that says why).
    private enum Posted {
        case answer(Response)
        case form(person: SessionWithAccount, fields: [String: String], files: [String: (type: String?, bytes: Data)])
    }

    private func signedInForm(_ request: Request, limit: Int = 16_384) async throws -> Posted {
        guard let person = try await person(request) else { return .answer(toPage) }
        do {
            let (fields, files) = try await form(request, limit: limit)
            return .form(person: person, fields: fields, files: files)
        } catch is Refused {
            let language = language(request)
            let (token, set) = csrf(request)
            var page = values(language, csrf: token)
            page["error"] = LocalizedText("page.sprofile.expired").render(language)
            return .answer(try await profilePage(person.session.accountID, page, language: language, status: .forbidden, cookies: set))
        }
    }

    @Sendable func savePosted(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let (person, fields): (SessionWithAccount, [String: String])
        switch try await signedInForm(request) {
        case .answer(let answer): return answer
        case .form(let who, let posted, _): (person, fields) = (who, posted)
        }
        let change = SignatureProfileUpdate(phoneNumber: fields["phone_number"] ?? "", companyName: fields["company_name"] ?? "",
                                            position: fields["position"] ?? "", birthday: fields["birthday"] ?? "", sex: fields["sex"] ?? "")
        let account = person.session.accountID
        do {
            _ = try await profiles.update(account, change, by: .account(account), origin: origin(request, context))
            return see(done: "saved")
        } catch let error as GatehouseError {
            return try await refused(error, account: account, request)
        }
    }

    @Sendable func photoPosted(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let (person, fields, files): (SessionWithAccount, [String: String], [String: (type: String?, bytes: Data)])
        switch try await signedInForm(request, limit: signature.photoMaxBytes + 65_536) {
        case .answer(let answer): return answer
        case .form(let who, let posted, let parts): (person, fields, files) = (who, posted, parts)
        }
        let account = person.session.accountID
        do {
            if fields["remove"] == "1" {
                _ = try await profiles.setPhoto(account, nil, by: .account(account), origin: origin(request, context))
            } else {
                guard let file = files["photo"] else { throw GatehouseError(.invalidInput, .invalidImage, LocalizedText("error.invalidImage"), field: "photo") }
                _ = try await profiles.setPhoto(account, file.bytes, by: .account(account), origin: origin(request, context))
            }
            return see(done: "photo")
        } catch let error as GatehouseError {
            return try await refused(error, account: account, request)
        }
    }

    /// The profile page again, saying why the form was refused (400).
    private func refused(_ error: GatehouseError, account: UUID, _ request: Request) async throws -> Response {
        let language = language(request)
        let (token, set) = csrf(request)
        var page = values(language, csrf: token)
        page["error"] = error.message.render(language)
        return try await profilePage(account, page, language: language, status: .badRequest, cookies: set)
    }

    @Sendable func photoImage(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        guard let person = try await person(request), let photo = try await profiles.photo(of: person.session.accountID) else {
            return Response(status: .notFound)
        }
        return SignatureProfileController.image(photo.bytes, contentType: photo.contentType)
    }

    @Sendable func deletePosted(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let (person, fields): (SessionWithAccount, [String: String])
        switch try await signedInForm(request) {
        case .answer(let answer): return answer
        case .form(let who, let posted, _): (person, fields) = (who, posted)
        }
        let language = language(request)
        let (token, set) = csrf(request)
        var page = values(language, csrf: token)
        let account = person.session.accountID
        guard fields["confirm"] == "yes" else {
            page["error"] = LocalizedText("page.sprofile.confirmFirst").render(language)
            return try await profilePage(account, page, language: language, status: .badRequest, cookies: set)
        }
        try await profiles.erase(account, by: .account(account), origin: origin(request, context))
        try await sessions.revoke(sessionID: person.session.id)
        page["done"] = LocalizedText("page.sprofile.deleted").render(language)
        return SignatureProfilePage.render(page, cookies: set + [cookie(Self.sessionCookie, "", maxAge: 0)])
    }

    @Sendable func signOutPosted(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        if let person = try await person(request), (try? await form(request)) != nil { try await sessions.revoke(sessionID: person.session.id) }
        var response = toPage
        response.headers.append(HTTPField(name: .setCookie, value: cookie(Self.sessionCookie, "", maxAge: 0)))
        return response
    }

    package init(profiles: SignatureProfiles, sessions: SessionService, signature: GatehouseConfiguration.Signature, edge: SurfaceEdge) {
        self.profiles = profiles
        self.sessions = sessions
        self.signature = signature
        self.edge = edge
    }
}

private extension String {
    var nilIfEmpty: String? { isEmpty ? nil : self }
}
