import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import GatehouseSignToLogin
import HTTPTypes
import Hummingbird
import NIOCore

/// The developer console (`/console`): a developer signs in with their account's email and
/// password, sees their apps, adds one (the five fields and an icon), reads a new key once,
/// disables, enables and rotates. Server-rendered, no script.
///
/// The session is a session of the accounts core in an `HttpOnly`, `SameSite=Lax` cookie
/// (`Secure` outside development). Every form carries a CSRF token that must equal the
/// `HttpOnly` CSRF cookie (a double-submit token another site can neither read nor set).
package struct ConsoleController: Sendable {
    package let login: LoginService
    package let sessions: SessionService
    package let apps: AppsService
    package let signature: GatehouseConfiguration.Signature
    package let edge: SurfaceEdge

    package static let sessionCookie = "gh_console"
    package static let csrfCookie = "gh_console_csrf"

    package func addRoutes(to router: some RouterMethods<GatehouseRequestContext>) {
        router.route(ServerPages.Console.home, use: home)
        router.route(ServerPages.Console.loginPage, use: loginPage)
        router.route(ServerPages.Console.signIn, use: signIn)
        router.route(ServerPages.Console.signOut, use: signOut)
        router.route(ServerPages.Console.create, use: create)
        router.route(ServerPages.Console.change, use: change)
    }

    // The console's operations: HTML pages and forms (a cookie session, checked here).

    // MARK: Cookies and forms

    private func cookies(_ request: Request) -> [String: String] { PageForm.cookies(request) }

    private func cookie(_ name: String, _ value: String, maxAge: Int?) -> String {
        PageForm.cookie(name, value, path: "/console", sameSite: "Lax", secure: edge.secureCookies, maxAge: maxAge)
    }

    /// The CSRF token in the cookie, or a new one (and the cookie that sets it).
    private func csrf(_ request: Request) -> (token: String, setCookie: [String]) {
        if let token = cookies(request)[Self.csrfCookie], token.count == 43 { return (token, []) }
        let token = Secrets.systemToken()
        return (token, [cookie(Self.csrfCookie, token, maxAge: nil)])
    }

    /// The form's fields (urlencoded or multipart) and its file parts; refuses a form whose CSRF
    /// token is not the cookie's.
    private func form(_ request: Request, limit: Int) async throws -> (fields: [String: String], files: [String: (type: String?, bytes: Data)]) {
        let fields: [String: String]
        let files: [String: (type: String?, bytes: Data)]
        do {
            (fields, files) = try await PageForm.read(request, limit: limit)
        } catch is PageForm.Unreadable {
            throw ConsoleError.message("The form could not be read.")
        }
        guard let sent = fields["csrf"], let expected = cookies(request)[Self.csrfCookie], Secrets.constantTimeEquals(sent, expected) else {
            throw ConsoleError.forbidden
        }
        return (fields, files)
    }

    private enum ConsoleError: Error {
        case message(String)
        case forbidden
    }

    /// The signed-in developer, from the session cookie.
    private func developer(_ request: Request) async throws -> SessionWithAccount? {
        guard let token = cookies(request)[Self.sessionCookie], !token.isEmpty, token.count <= 100 else { return nil }
        return try await sessions.authenticate(token: token)
    }

    /// The status of a page answering a form that could not be used.
    package static func status(of error: any Error) -> HTTPResponse.Status {
        guard let error = error as? GatehouseError else { return .badRequest }
        switch error.kind {
        case .payloadTooLarge: return .contentTooLarge
        case .notFound: return .notFound
        case .rateLimited: return .tooManyRequests
        default: return .badRequest
        }
    }

    private var toLogin: Response { Response(status: .seeOther, headers: [.location: "/console/login"]) }
    private var toHome: Response { Response(status: .seeOther, headers: [.location: "/console"]) }

    // MARK: Pages

    @Sendable package func loginPage(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        if try await developer(request) != nil { return toHome }
        let (token, set) = csrf(request)
        return ConsolePage.render(["title": "Sign in", "login": true, "csrf": token], cookies: set)
    }

    @Sendable package func signIn(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let (token, set) = csrf(request)
        let fields: [String: String]
        do {
            fields = try await form(request, limit: 16_384).fields
        } catch ConsoleError.forbidden {
            return ConsolePage.render(["title": "Sign in", "login": true, "csrf": token, "error": "The form expired. Please try again."],
                                      status: .forbidden, cookies: set)
        } catch {
            return ConsolePage.render(["title": "Sign in", "login": true, "csrf": token, "error": "The form could not be read."],
                                      status: Self.status(of: error), cookies: set)
        }
        let email = fields["email"] ?? ""
        let challenge = fields["challenge"].flatMap { $0.isEmpty ? nil : String($0.prefix(200)) }
        do {
            let origin = RequestOrigin(ip: request.clientIP(context: context, trustForwardedFor: edge.trustForwardedFor),
                                       language: .en, device: "Developer console", requestID: context.requestID)
            let session: IssuedSession
            if let challenge {
                let typed = SecondFactors.split(fields["code"] ?? "")
                session = try await login.completeSecondStep(challenge: challenge, code: typed.code, recoveryCode: typed.recoveryCode, origin: origin)
            } else {
                session = try await login.login(identifier: email, password: fields["password"] ?? "", origin: origin, accepting: .any, secondStep: true)
            }
            let maxAge = max(60, Int(session.expiresAt.timeIntervalSince(Date())))
            var response = toHome
            response.headers.append(HTTPField(name: .setCookie, value: cookie(Self.sessionCookie, session.token, maxAge: maxAge)))
            return response
        } catch let error as GatehouseError {
            let status: HTTPResponse.Status = if case .rateLimited = error.kind { .tooManyRequests } else { .unauthorized }
            // The password was right and a code is wanted; or a wrong code on a live challenge: ask (again) for the code.
            if let next = error.secondFactor?.challenge ?? (error.code == .invalidCode ? challenge : nil) {
                var values: [String: Any] = ["title": "Two-step login", "secondStep": next, "csrf": token, "email": email]
                if error.secondFactor == nil { values["error"] = error.message.render(.en) }
                return ConsolePage.render(values, status: error.secondFactor == nil ? status : .ok, cookies: set)
            }
            return ConsolePage.render(["title": "Sign in", "login": true, "csrf": token, "email": email, "error": error.message.render(.en)],
                                      status: status, cookies: set)
        }
    }

    @Sendable package func signOut(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        guard (try? await form(request, limit: 4_096)) != nil else { return toLogin }
        if let developer = try await developer(request) { try await sessions.revoke(sessionID: developer.session.id) }
        var response = toLogin
        response.headers.append(HTTPField(name: .setCookie, value: cookie(Self.sessionCookie, "", maxAge: 0)))
        return response
    }

    @Sendable package func home(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        guard let developer = try await developer(request) else { return toLogin }
        let (token, set) = csrf(request)
        return try await appsPage(developer, csrf: token, cookies: set)
    }

    private func appsPage(_ developer: SessionWithAccount, csrf: String, cookies: [String], error: String? = nil,
                          newKey: (app: String, key: String)? = nil, status: HTTPResponse.Status = .ok) async throws -> Response {
        let rows = try await apps.list(owner: developer.account.id).map { row -> [String: Any] in
            let id = row.id.uuidString.lowercased()
            var values: [String: Any] = [
                "id": id, "name": row.name, "bundleId": row.bundleID, "email": row.email, "keyHint": row.keyHint,
                "state": row.enabled ? "Enabled" : "Disabled", "stateClass": row.enabled ? "on" : "off",
                "toggle": row.enabled ? "disable" : "enable", "toggleTitle": row.enabled ? "Disable" : "Enable", "csrf": csrf,
            ]
            if let website = row.website { values["website"] = website }
            if let key = row.iconBlobKey { values["icon"] = V1.Apps.icon.path(["id": id]) + "?v=" + String(key.prefix(12)) }
            return values
        }
        var values: [String: Any] = ["title": "My apps", "apps": true, "hasApps": !rows.isEmpty, "list": rows, "csrf": csrf,
                                     "signedIn": developer.account.email ?? ""]
        if let error { values["error"] = error }
        if let newKey { values["newKey"] = newKey.key; values["newKeyApp"] = newKey.app }
        return ConsolePage.render(values, status: status, cookies: cookies)
    }

    @Sendable package func create(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        guard let developer = try await developer(request) else { return toLogin }
        let (token, set) = csrf(request)
        do {
            let (fields, files) = try await form(request, limit: signature.appIconMaxBytes + 65_536)
            let new = NewApp(name: fields["name"] ?? "", bundleId: fields["bundleId"] ?? "", email: fields["email"] ?? "", website: fields["website"])
            // The icon is checked before the app is made, so a bad one leaves nothing behind.
            if let icon = files["icon"] { try apps.checkIcon(contentType: icon.type, bytes: icon.bytes) }
            var (row, key) = try await apps.create(new, owner: developer.account.id, by: .account(developer.account.id))
            if let icon = files["icon"] { row = try await apps.setIcon(row, contentType: icon.type, bytes: icon.bytes) }
            return try await appsPage(developer, csrf: token, cookies: set, newKey: (row.name, key))
        } catch ConsoleError.forbidden {
            return try await appsPage(developer, csrf: token, cookies: set, error: "The form expired. Please try again.", status: .forbidden)
        } catch ConsoleError.message(let text) {
            return try await appsPage(developer, csrf: token, cookies: set, error: text, status: .badRequest)
        } catch let error as GatehouseError {
            return try await appsPage(developer, csrf: token, cookies: set, error: error.message.render(.en), status: Self.status(of: error))
        }
    }

    @Sendable package func change(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        guard let developer = try await developer(request) else { return toLogin }
        let (token, set) = csrf(request)
        do {
            _ = try await form(request, limit: 4_096)
            guard let id = context.pathIDs["id"] else { throw AppsService.notFound }
            let row = try await apps.app(id, owner: developer.account.id)
            switch context.parameters.get("action") {
            case "disable": _ = try await apps.update(row, AppUpdate(enabled: false), by: .account(developer.account.id))
            case "enable": _ = try await apps.update(row, AppUpdate(enabled: true), by: .account(developer.account.id))
            case "rotate":
                let (rotated, key) = try await apps.rotateKey(row, by: .account(developer.account.id))
                return try await appsPage(developer, csrf: token, cookies: set, newKey: (rotated.name, key))
            default: throw AppsService.notFound
            }
            return toHome
        } catch ConsoleError.forbidden {
            return try await appsPage(developer, csrf: token, cookies: set, error: "The form expired. Please try again.", status: .forbidden)
        } catch ConsoleError.message(let text) {
            return try await appsPage(developer, csrf: token, cookies: set, error: text, status: .badRequest)
        } catch let error as GatehouseError {
            return try await appsPage(developer, csrf: token, cookies: set, error: error.message.render(.en), status: Self.status(of: error))
        }
    }

    package init(login: LoginService, sessions: SessionService, apps: AppsService, signature: GatehouseConfiguration.Signature, edge: SurfaceEdge) {
        self.login = login
        self.sessions = sessions
        self.apps = apps
        self.signature = signature
        self.edge = edge
    }
}
