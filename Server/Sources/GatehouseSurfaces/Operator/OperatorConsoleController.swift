import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import GatehouseSignToLogin
import GatehouseWallet
import HTTPTypes
import Hummingbird
import NIOCore

/// The operator console (`/operator`, docs/operators.md "The console"): operators sign in with
/// their password and a TOTP code to a short session bound to the console (its own cookie and
/// table: a person's session is never an operator's); find an account and help its person, each
/// action within their role, with a required reason, in the audit trail as `operator` and their
/// name; read the outbox, the client records and the trail.
///
/// Every form carries a CSRF token: derived from the session (the sign-in form: a double-submit
/// cookie). The session cookie is `HttpOnly`, `SameSite=Strict`, `Secure` outside development,
/// its path `/operator`. Pages have the console's CSP (no script) and `frame-ancestors 'none'`.
/// No account data goes into a URL: searches are posted, pages are named by ids.
package struct OperatorConsoleController: Sendable {
    package let services: Services
    package let defaultCountryCode: String
    package let operators: GatehouseConfiguration.Operators
    package let edge: SurfaceEdge

    /// What the console works with.
    package struct Services: Sendable {
        package var operators: Operators
        package var sessions: SessionService
        package var login: LoginService
        package var locks: AccountLocks
        package var email: EmailService
        package var recovery: RecoveryService
        package var clients: ClientRecords
        package var wallets: WalletService
        package var topUps: TopUpService
        package var apps: AppsService
        package var signatures: SignatureService
        package var audit: AuditLog
        package var outbox: OperatorOutbox
        package var secondFactors: SecondFactors
        package var passkeys: Passkeys

        package init(operators: Operators, sessions: SessionService, login: LoginService, locks: AccountLocks, email: EmailService,
                     recovery: RecoveryService, clients: ClientRecords, wallets: WalletService, topUps: TopUpService, apps: AppsService, signatures: SignatureService,
                     audit: AuditLog, outbox: OperatorOutbox, secondFactors: SecondFactors, passkeys: Passkeys) {
            self.operators = operators
            self.sessions = sessions
            self.login = login
            self.locks = locks
            self.email = email
            self.recovery = recovery
            self.clients = clients
            self.wallets = wallets
            self.topUps = topUps
            self.apps = apps
            self.signatures = signatures
            self.audit = audit
            self.outbox = outbox
            self.secondFactors = secondFactors
            self.passkeys = passkeys
        }
    }

    package init(services: Services, defaultCountryCode: String, operators: GatehouseConfiguration.Operators, edge: SurfaceEdge) {
        self.services = services
        self.defaultCountryCode = defaultCountryCode
        self.operators = operators
        self.edge = edge
    }

    package static let sessionCookie = "gh_operator"
    package static let csrfCookie = "gh_operator_csrf"


    package func addRoutes(to router: some RouterMethods<GatehouseRequestContext>) {
        router.route(ServerPages.OperatorConsole.home, use: homePage)
        router.route(ServerPages.OperatorConsole.loginPage, use: loginForm)
        router.route(ServerPages.OperatorConsole.signIn, use: signInPost)
        router.route(ServerPages.OperatorConsole.signOut, use: signOutPost)
        router.route(ServerPages.OperatorConsole.find, use: findPost)
        router.route(ServerPages.OperatorConsole.account, use: accountPage)
        router.route(ServerPages.OperatorConsole.act, use: actPost)
        router.route(ServerPages.OperatorConsole.audit, use: auditPage)
        router.route(ServerPages.OperatorConsole.outbox, use: outboxPage)
        router.route(ServerPages.OperatorConsole.outboxFind, use: outboxFindPost)
        router.route(ServerPages.OperatorConsole.outboxRetry, use: outboxRetryPost)
        router.route(ServerPages.OperatorConsole.clients, use: clientsPage)
        router.route(ServerPages.OperatorConsole.clientsFind, use: clientsFindPost)
        router.route(ServerPages.OperatorConsole.clientsImport, use: clientsImportPost)
    }

    // MARK: Cookies, forms, the session

    private func cookies(_ request: Request) -> [String: String] { PageForm.cookies(request) }

    private func cookie(_ name: String, _ value: String, maxAge: Int?) -> String {
        PageForm.cookie(name, value, path: "/operator", sameSite: "Strict", secure: edge.secureCookies, maxAge: maxAge)
    }

    private enum Refused: Error {
        /// The form's CSRF token is missing or wrong.
        case forbidden
        /// The operator's role does not allow the action.
        case role(OperatorRole)
        case message(String)
    }

    /// A form's fields and files (urlencoded or multipart).
    private func form(_ request: Request, limit: Int) async throws -> (fields: [String: String], files: [String: Data]) {
        do {
            let (fields, files) = try await PageForm.read(request, limit: limit)
            return (fields, files.mapValues(\.bytes))
        } catch is PageForm.Unreadable {
            throw Refused.message("The form could not be read.")
        }
    }

    /// A form of a signed-in operator: its CSRF token must be the session's.
    private func signedForm(_ request: Request, _ session: OperatorSession, limit: Int = 65_536) async throws -> (fields: [String: String], files: [String: Data]) {
        let form = try await form(request, limit: limit)
        guard let sent = form.fields["csrf"], Secrets.constantTimeEquals(sent, session.csrf) else { throw Refused.forbidden }
        return form
    }

    private func session(_ request: Request) async throws -> OperatorSession? {
        guard let token = cookies(request)[Self.sessionCookie], !token.isEmpty else { return nil }
        return try await services.operators.session(token: token)
    }

    private var toLogin: Response { Response(status: .seeOther, headers: [.location: "/operator/login"]) }
    private func see(_ path: String) -> Response { Response(status: .seeOther, headers: [.location: path]) }

    private func origin(_ request: Request, _ context: GatehouseRequestContext) -> AuditOrigin {
        AuditOrigin(ip: request.clientIP(context: context, trustForwardedFor: edge.trustForwardedFor),
                    device: request.headers[.userAgent].map { String($0.prefix(200)) }, requestID: context.requestID)
    }

    /// The values every signed-in page has.
    private func page(_ session: OperatorSession, _ title: String) -> [String: Any] {
        ["title": title, "signedIn": session.who.name, "role": session.who.role.rawValue, "csrf": session.csrf]
    }

    private static func date(_ date: Date?) -> String {
        guard let date else { return "" }
        return WireDates.iso8601String(from: date).replacingOccurrences(of: "T", with: " ").replacingOccurrences(of: "Z", with: " UTC")
    }

    /// A reason: required, trimmed, at most 500 characters.
    private static func reason(_ fields: [String: String]) throws -> String {
        let reason = (fields["reason"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard !reason.isEmpty else { throw Refused.message("Say why: the reason is kept in the audit trail.") }
        guard reason.count <= 500 else { throw Refused.message("The reason is longer than 500 characters.") }
        return reason
    }

    private static func message(of error: any Error) -> (String, HTTPResponse.Status) {
        switch error {
        case Refused.forbidden: ("The form expired. Please try again.", .forbidden)
        case Refused.role(let role): ("Your role (\(role.rawValue)) may not do this.", .forbidden)
        case Refused.message(let text): (text, .badRequest)
        case let error as GatehouseError: (error.message.render(.en), ConsoleController.status(of: error))
        default: ("The form could not be read.", .badRequest)
        }
    }

    // MARK: Signing in and out

    @Sendable func loginForm(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        if try await session(request) != nil { return see("/operator") }
        let (token, set) = loginCSRF(request)
        return OperatorPage.render(["title": "Sign in", "login": true, "csrf": token], cookies: set)
    }

    /// The sign-in form's CSRF token: a double-submit cookie (there is no session yet).
    private func loginCSRF(_ request: Request) -> (String, [String]) {
        if let token = cookies(request)[Self.csrfCookie], token.count == 43 { return (token, []) }
        let token = Secrets.systemToken()
        return (token, [cookie(Self.csrfCookie, token, maxAge: nil)])
    }

    @Sendable func signInPost(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        let (token, set) = loginCSRF(request)
        var values: [String: Any] = ["title": "Sign in", "login": true, "csrf": token]
        let fields: [String: String]
        do {
            fields = try await form(request, limit: 16_384).fields
            guard let sent = fields["csrf"], let expected = cookies(request)[Self.csrfCookie], Secrets.constantTimeEquals(sent, expected) else {
                throw Refused.forbidden
            }
        } catch {
            let (text, status) = Self.message(of: error)
            values["error"] = text
            return OperatorPage.render(values, status: status, cookies: set)
        }
        values["name"] = fields["name"] ?? ""
        do {
            let origin = origin(request, context)
            let (sessionToken, session) = try await services.operators.signIn(
                name: fields["name"] ?? "", password: fields["password"] ?? "", code: fields["code"] ?? "",
                ip: origin.ip, device: origin.device, requestID: origin.requestID)
            var response = see("/operator")
            let maxAge = max(60, Int(session.expiresAt.timeIntervalSince(Date())))
            response.headers.append(HTTPField(name: .setCookie, value: cookie(Self.sessionCookie, sessionToken, maxAge: maxAge)))
            return response
        } catch let error as GatehouseError {
            let status: HTTPResponse.Status = if case .rateLimited = error.kind { .tooManyRequests } else { .unauthorized }
            values["error"] = error.code == .invalidCredentials ? "Wrong name, password or code." : error.message.render(.en)
            return OperatorPage.render(values, status: status, cookies: set)
        }
    }

    @Sendable func signOutPost(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        if let session = try await session(request), (try? await signedForm(request, session)) != nil,
           let token = cookies(request)[Self.sessionCookie] {
            try await services.operators.signOut(token: token)
        }
        var response = toLogin
        response.headers.append(HTTPField(name: .setCookie, value: cookie(Self.sessionCookie, "", maxAge: 0)))
        return response
    }

    // MARK: Finding an account

    @Sendable func homePage(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        guard let session = try await session(request) else { return toLogin }
        var values = page(session, "Find an account")
        values["search"] = true
        return OperatorPage.render(values)
    }

    @Sendable func findPost(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        guard let session = try await session(request) else { return toLogin }
        var values = page(session, "Find an account")
        values["search"] = true
        do {
            let query = (try await signedForm(request, session).fields["query"] ?? "").trimmingCharacters(in: .whitespaces)
            values["query"] = query
            if let id = UUID(uuidString: query), (try? await services.login.account(id: id)) != nil {
                return see("/operator/accounts/\(id.uuidString.lowercased())")
            }
            if let row = try await services.login.findAccount(identifier: query), let id = row.id {
                return see("/operator/accounts/\(id.uuidString.lowercased())")
            }
            values["error"] = "No account is named by this (an id, a confirmed email, a verified phone, a login or a tag)."
            return OperatorPage.render(values, status: .notFound)
        } catch {
            let (text, status) = Self.message(of: error)
            values["error"] = text
            return OperatorPage.render(values, status: status)
        }
    }

    // MARK: An account

    @Sendable func accountPage(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        guard let session = try await session(request) else { return toLogin }
        guard let id = context.pathIDs["id"] else { return notFoundPage(session) }
        let done = request.uri.queryParameters["done"].flatMap { Self.doneTexts[String($0)] }
        return try await accountPage(session, id, done: done)
    }

    private func notFoundPage(_ session: OperatorSession) -> Response {
        var values = page(session, "Not found")
        values["search"] = true
        values["error"] = "There is no such account."
        return OperatorPage.render(values, status: .notFound)
    }

    private static let doneTexts = [
        "revoke-sessions": "Every session ended.", "lock": "The account is locked.", "unlock": "The account is unlocked.",
        "resend-confirmation": "The confirmation link is on its way.", "send-recovery-code": "A recovery code is on its way.",
        "unbind-client": "The client record is unbound.",
        "remove-second-factors": "The authenticator app is off and every passkey is removed; the owner is told.", "credit": "The wallet is credited.", "reverse": "The top-up is reversed.",
        "refunded": "The top-up is refunded at the payment provider and taken back from the wallet.",
        "reversed-before": "That top-up was reversed before: nothing changed.",
        "refund-pending": "The payment provider accepted the refund; the wallet follows when the provider confirms it.",
    ]

    private func accountPage(_ session: OperatorSession, _ id: UUID, done: String? = nil, error: String? = nil,
                             status: HTTPResponse.Status = .ok) async throws -> Response {
        guard let account = try? await services.login.account(id: id) else { return notFoundPage(session) }
        var values = page(session, "Account")
        if let done { values["done"] = done }
        if let error { values["error"] = error }
        let role = session.who.role
        let lock = try await services.locks.lock(of: id)
        let name = [account.firstName, account.middleName, account.lastName].compactMap { $0 }.joined(separator: " ")
        var info: [String: Any] = [
            "id": id.uuidString.lowercased(), "name": name.isEmpty ? "—" : name, "login": account.username ?? "—",
            "email": account.displayedEmail ?? "—", "emailState": account.displayedEmail == nil ? "" : account.isEmailConfirmed ? "(confirmed)" : "(not confirmed)",
            "phone": account.phone ?? "—", "phoneState": account.phone == nil ? "" : account.phoneVerifiedAt != nil ? "(verified)" : "(not verified)",
            "locale": account.locale ?? "—", "createdAt": Self.date(account.createdAt), "locked": lock != nil,
            "lockedAt": Self.date(lock?.at), "lockedReason": lock?.reason ?? "",
            "canResend": account.displayedEmail != nil && !account.isEmailConfirmed,
        ]
        if let email = account.email, account.emailConfirmedAt != nil { info["recoveryTo"] = email }
        else if let phone = account.phone, account.phoneVerifiedAt != nil { info["recoveryTo"] = phone }
        let factors = try await services.secondFactors.status(accountID: id)
        let passkeys = try await services.passkeys.list(accountID: id)
        info["totp"] = factors.totpSince.map { "on since " + Self.date($0) } ?? "off"
        info["passkeyCount"] = passkeys.count
        info["passkeys"] = passkeys.map { ["name": $0.name, "createdAt": Self.date($0.createdAt), "lastUsedAt": Self.date($0.lastUsedAt)] }
        info["hasSecondFactors"] = factors.totp || !passkeys.isEmpty
        let sessions = try await services.sessions.list(accountID: id)
        info["sessionCount"] = sessions.count
        info["sessions"] = sessions.map { ["device": $0.device ?? "—", "ip": $0.ip ?? "—", "createdAt": Self.date($0.createdAt), "lastUsedAt": Self.date($0.lastUsedAt)] }
        if let client = try await services.clients.record(of: id) {
            info["client"] = Self.clientValues(client, account: nil)
        }
        if let wallet = try? await services.wallets.info(account) {
            let movements = (try? await services.wallets.transactions(id, cursor: nil, limit: 10).items) ?? []
            var walletValues: [String: Any] = ["balance": Kopecks.format(wallet.balance, grouping: " ") + " ₽",
                                               "reference": "console-" + Secrets.systemToken()]
            walletValues["movements"] = movements.map { movement -> [String: Any] in
                ["id": movement.id.uuidString.lowercased(), "owner": id.uuidString.lowercased(), "createdAt": Self.date(movement.createdAt),
                 "kind": movement.kind.rawValue, "amount": Kopecks.format(movement.amount, grouping: " "), "comment": movement.comment ?? "",
                 "balanceAfter": Kopecks.format(movement.balanceAfter, grouping: " "),
                 "reversible": movement.kind == .topup && role.may(.reverse)]
            }
            info["wallet"] = walletValues
        }
        let enrolments = try await services.signatures.enrolments(accountID: id)
        info["hasEnrolments"] = !enrolments.isEmpty
        info["enrolments"] = enrolments.map { ["deviceClass": $0.deviceClass, "app": $0.app ?? "—", "createdAt": Self.date($0.createdAt), "proven": $0.proven ? "yes" : "no"] }
        let apps = try await services.apps.list(owner: id)
        info["hasApps"] = !apps.isEmpty
        info["apps"] = apps.map { ["name": $0.name, "bundleId": $0.bundleID, "state": $0.enabled ? "enabled" : "disabled"] }
        var recent = AuditLog.Query(account: id)
        recent.limit = 20
        info["events"] = try await services.audit.events(recent).map(Self.eventValues)
        values["account"] = info
        values["mayAct"] = role.may(.lock)
        values["mayCredit"] = role.may(.credit)
        return OperatorPage.render(values, status: status)
    }

    private static func clientValues(_ client: ClientRecord, account: UUID?) -> [String: Any] {
        let name = [client.firstName, client.middleName, client.lastName].compactMap { $0 }.joined(separator: " ")
        var values: [String: Any] = [
            "phone": client.phone, "name": name.isEmpty ? "—" : name, "email": client.email ?? "—", "birthday": client.birthday ?? "—",
            "room": client.room ?? "—", "base": client.base ?? "—",
            "parts": client.parts.isEmpty ? "—" : client.parts.map { "\($0.name) (fines \($0.forfeit), discount \($0.discount)%\($0.isBanned ? ", banned" : ""))" }.joined(separator: "; "),
        ]
        if let account { values["account"] = account.uuidString.lowercased() }
        return values
    }

    private static func eventValues(_ event: AuditRecord) -> [String: Any] {
        var values: [String: Any] = [
            "at": date(event.at), "kind": event.kind + (event.count > 1 ? " ×\(event.count)" : ""),
            // An account's id shortened (the account column links it in full).
            "actor": [event.actorType, event.actorType == "account" ? event.actorID.map { String($0.prefix(8)) + "…" } : event.actorID]
                .compactMap { $0 }.joined(separator: " "), "ip": event.ip ?? "",
            "requestId": event.requestID ?? "",
            "detail": event.detail.keys.sorted().map { "\($0): \(event.detail[$0] ?? "")" }.joined(separator: ", "),
        ]
        if let account = event.account {
            values["account"] = account.uuidString.lowercased()
            values["accountShort"] = String(account.uuidString.lowercased().prefix(8)) + "…"
        }
        return values
    }

    @Sendable func actPost(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        guard let session = try await session(request) else { return toLogin }
        guard let id = context.pathIDs["id"], let account = try? await services.login.account(id: id) else { return notFoundPage(session) }
        guard let raw = context.parameters.get("action"), ServerPages.OperatorConsole.accountActions.contains(raw),
              let action = OperatorAction(rawValue: raw) else { return notFoundPage(session) }
        let actor = AuditActor.operator(session.who.name)
        let origin = origin(request, context)
        do {
            let fields = try await signedForm(request, session).fields
            guard session.who.role.may(action) else {
                throw Refused.role(session.who.role)
            }
            let reason = try Self.reason(fields)
            var done = action.rawValue
            switch action {
            case .revokeSessions:
                _ = try await services.sessions.revokeAll(accountID: id, keeping: nil, by: actor, origin: origin, reason: reason)
            case .lock:
                _ = try await services.locks.lock(id, reason: reason, by: actor, origin: origin)
            case .unlock:
                _ = try await services.locks.unlock(id, reason: reason, by: actor, origin: origin)
            case .resendConfirmation:
                let requestOrigin = RequestOrigin(ip: origin.ip, language: account.language, device: origin.device, requestID: origin.requestID)
                try await services.email.sendEmailConfirmation(accountID: id, origin: requestOrigin, by: actor, reason: reason)
            case .sendRecoveryCode:
                let destination: Destination
                if let email = account.email, account.emailConfirmedAt != nil { destination = .email(email) }
                else if let phone = account.phone, account.phoneVerifiedAt != nil { destination = .phone(phone) }
                else { throw Refused.message("The account has no confirmed email and no verified phone to send a code to.") }
                let requestOrigin = RequestOrigin(ip: origin.ip, language: account.language, device: origin.device, requestID: origin.requestID)
                _ = try await services.recovery.requestRecoveryCode(to: destination, origin: requestOrigin, by: actor, reason: reason)
            case .removeSecondFactors:
                guard try await services.secondFactors.removeAll(accountID: id, reason: reason, by: actor, origin: origin) else {
                    throw Refused.message("The account has no second factor: no authenticator app and no passkey.")
                }
            case .unbindClient:
                guard try await services.clients.unbind(accountID: id, reason: reason, by: actor, origin: origin) else {
                    throw Refused.message("No client record is bound to this account.")
                }
            case .credit:
                guard let amount = Kopecks.parse(fields["amount"] ?? ""), amount > 0 else {
                    throw Refused.message("The amount is a positive number of roubles with at most two decimals, such as 500.00.")
                }
                guard let phone = account.phone, account.phoneVerifiedAt != nil else { throw Refused.message("The account has no verified phone: no wallet to credit.") }
                let reference = fields["reference"].flatMap { $0.hasPrefix("console-") && $0.count <= 60 ? $0 : nil }
                _ = try await services.wallets.credit(phone: phone, amount: amount, reason: reason, reference: reference, by: actor, origin: origin)
            case .reverse:
                guard let transfer = fields["transfer"].flatMap(UUID.init(uuidString:)) else { throw Refused.message("Which top-up? The form is missing it.") }
                let given = try await services.topUps.giveBack(transfer: transfer, of: id, reason: reason, by: actor, origin: origin)
                switch given {
                case .reversed: break
                case .refunded: done = "refunded"
                case .before: done = "reversed-before"
                case .pending: done = "refund-pending"
                }
            case .view, .importClients, .retryMessage:
                return notFoundPage(session)
            }
            return see("/operator/accounts/\(id.uuidString.lowercased())?done=\(done)")
        } catch {
            let (text, status) = Self.message(of: error)
            return try await accountPage(session, id, error: text, status: status)
        }
    }

    // MARK: The audit trail

    @Sendable func auditPage(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        guard let session = try await session(request) else { return toLogin }
        var values = page(session, "Audit trail")
        let query = request.uri.queryParameters
        func text(_ name: String) -> String { query[Substring(name)].map { String($0).trimmingCharacters(in: .whitespaces) } ?? "" }
        var filter = AuditLog.Query()
        filter.limit = 50
        var problems: [String] = []
        let kind = text("kind"), actorType = text("actorType"), actor = text("actor"), account = text("account"), since = text("since"), until = text("until")
        if !kind.isEmpty { if let known = AuditKind(rawValue: kind) { filter.kinds = [known] } else { problems.append("no such kind") } }
        if !actorType.isEmpty { filter.actorType = String(actorType.prefix(20)) }
        if !actor.isEmpty { filter.actorID = String(actor.prefix(100)) }
        if !account.isEmpty { if let id = UUID(uuidString: account) { filter.account = id } else { problems.append("the account is an id") } }
        func day(_ text: String) -> Date? {
            let parts = text.split(separator: "-").compactMap { Int($0) }
            guard parts.count == 3 else { return nil }
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "UTC")!
            return calendar.date(from: DateComponents(year: parts[0], month: parts[1], day: parts[2]))
        }
        if !since.isEmpty { if let date = day(since) { filter.since = date } else { problems.append("since is yyyy-mm-dd") } }
        if !until.isEmpty { if let date = day(until) { filter.until = date.addingTimeInterval(86_400) } else { problems.append("until is yyyy-mm-dd") } }
        if let before = UUID(uuidString: text("before")) { filter.after = before }
        let events = problems.isEmpty ? try await services.audit.events(filter) : []
        var audit: [String: Any] = [
            "kinds": AuditKind.allCases.map { ["value": $0.rawValue, "selected": $0.rawValue == kind] },
            "actorTypes": ["account", "operator", "admin_key", "system", "anonymous"].map { ["value": $0, "selected": $0 == actorType] },
            "actor": actor, "accountFilter": account, "since": since, "until": until,
            "events": events.map(Self.eventValues),
        ]
        if events.count == filter.limit, let last = events.last {
            var items = [URLQueryItem]()
            for (name, value) in [("kind", kind), ("actorType", actorType), ("actor", actor), ("account", account), ("since", since), ("until", until)] where !value.isEmpty {
                items.append(URLQueryItem(name: name, value: value))
            }
            items.append(URLQueryItem(name: "before", value: last.id.uuidString.lowercased()))
            var components = URLComponents()
            components.queryItems = items
            audit["next"] = "/operator/audit?" + (components.percentEncodedQuery ?? "")
        }
        values["audit"] = audit
        if !problems.isEmpty { values["error"] = "The filters could not be read: " + problems.joined(separator: "; ") + "." }
        return OperatorPage.render(values, status: problems.isEmpty ? .ok : .badRequest)
    }

    // MARK: The outbox

    @Sendable func outboxPage(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        guard let session = try await session(request) else { return toLogin }
        return try await outboxPage(session, address: nil)
    }

    private func outboxPage(_ session: OperatorSession, address: String?, error: String? = nil, status: HTTPResponse.Status = .ok) async throws -> Response {
        var values = page(session, "Outbox")
        if let error { values["error"] = error }
        var shown = address ?? ""
        var destination: String?
        if let address, !address.isEmpty {
            shown = EmailAddress.normalize(address) ?? PhoneNumber.normalize(address, defaultCountryCode: defaultCountryCode) ?? address
            destination = shown
        }
        let rows = try await services.outbox.recent(to: destination)
        let mayRetry = session.who.role.may(.retryMessage)
        values["outbox"] = [
            "address": shown,
            "messages": rows.map { row -> [String: Any] in
                ["id": row.id.uuidString.lowercased(), "createdAt": Self.date(row.createdAt), "to": row.to,
                 "subject": row.subject ?? (row.kind == "sms" ? "SMS" : ""), "status": row.status, "attempts": row.attempts,
                 "lastError": row.lastError ?? "", "sentAt": Self.date(row.sentAt), "retry": mayRetry && row.failed]
            },
        ]
        return OperatorPage.render(values, status: status)
    }

    @Sendable func outboxFindPost(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        guard let session = try await session(request) else { return toLogin }
        do {
            let address = (try await signedForm(request, session).fields["address"] ?? "").trimmingCharacters(in: .whitespaces)
            return try await outboxPage(session, address: String(address.prefix(320)))
        } catch {
            let (text, status) = Self.message(of: error)
            return try await outboxPage(session, address: nil, error: text, status: status)
        }
    }

    @Sendable func outboxRetryPost(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        guard let session = try await session(request) else { return toLogin }
        do {
            let fields = try await signedForm(request, session).fields
            guard session.who.role.may(.retryMessage) else { throw Refused.role(session.who.role) }
            let reason = try Self.reason(fields)
            guard let id = context.pathIDs["id"] else { throw Refused.message("There is no such message.") }
            let retried = try await services.outbox.retry(id, reason: reason, by: .operator(session.who.name), origin: origin(request, context))
            guard retried else { throw Refused.message("Only a message that failed for good can be retried.") }
            return see("/operator/outbox")
        } catch {
            let (text, status) = Self.message(of: error)
            return try await outboxPage(session, address: nil, error: text, status: status)
        }
    }

    // MARK: Client records

    @Sendable func clientsPage(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        guard let session = try await session(request) else { return toLogin }
        return clientsPage(session, [:])
    }

    private func clientsPage(_ session: OperatorSession, _ extra: [String: Any], error: String? = nil, status: HTTPResponse.Status = .ok) -> Response {
        var values = page(session, "Client records")
        var clients: [String: Any] = ["mayImport": session.who.role.may(.importClients)]
        for (key, value) in extra { clients[key] = value }
        values["clients"] = clients
        if let error { values["error"] = error }
        return OperatorPage.render(values, status: status)
    }

    @Sendable func clientsFindPost(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        guard let session = try await session(request) else { return toLogin }
        do {
            let phone = (try await signedForm(request, session).fields["phone"] ?? "").trimmingCharacters(in: .whitespaces)
            guard let (record, account) = try await services.clients.recordAndAccount(phone: String(phone.prefix(40))) else {
                return clientsPage(session, ["phone": phone, "notFound": true], status: .notFound)
            }
            return clientsPage(session, ["phone": record.phone, "record": Self.clientValues(record, account: account)])
        } catch {
            let (text, status) = Self.message(of: error)
            return clientsPage(session, [:], error: text, status: status)
        }
    }

    /// A file uploaded is previewed (a dry run: what would be created, changed, refused); the
    /// preview's form carries the file back to apply it.
    @Sendable func clientsImportPost(_ request: Request, context: GatehouseRequestContext) async throws -> Response {
        guard let session = try await session(request) else { return toLogin }
        do {
            // The role first: an operator who may not import is refused before the body is read.
            guard session.who.role.may(.importClients) else {
                throw Refused.role(session.who.role)
            }
            let (fields, files) = try await signedForm(request, session, limit: operators.importMaxBytes * 2 + 65_536)
            let text: String
            if let data = files["file"] {
                guard data.count <= operators.importMaxBytes else { throw Refused.message("The file is over \(operators.importMaxBytes) bytes.") }
                guard let decoded = String(data: data, encoding: .utf8) else { throw Refused.message("The file is not UTF-8 text.") }
                text = decoded
            } else if let carried = fields["carried"].flatMap({ Data(base64Encoded: $0) }), let decoded = String(data: carried, encoding: .utf8) {
                // The previewed file, carried back by the preview's form exactly as it was.
                text = decoded
            } else {
                throw Refused.message("Choose a file to import.")
            }
            let format: ClientRecords.Format = if let named = fields["format"].flatMap(ClientRecords.Format.init(rawValue:)) { named }
                else if text.hasPrefix("{") || text.hasPrefix("\u{FEFF}{") { .jsonLines } else { .csv }
            let apply = fields["apply"] == "1"
            let report = try await services.clients.importFile(text, format: format, by: .operator(session.who.name), dryRun: !apply)
            var values: [String: Any] = [
                "applied": apply, "created": report.created, "updated": report.updated, "unchanged": report.unchanged,
                "refusedCount": report.refused.count, "hasRefusals": !report.refused.isEmpty,
                "refused": report.refused.prefix(500).map { ["line": $0.line, "reason": $0.reason] }, "format": format.rawValue,
            ]
            if !apply { values["carried"] = Data(text.utf8).base64EncodedString() }
            return clientsPage(session, ["report": values])
        } catch {
            let (text, status) = Self.message(of: error)
            return clientsPage(session, [:], error: text, status: status)
        }
    }
}
