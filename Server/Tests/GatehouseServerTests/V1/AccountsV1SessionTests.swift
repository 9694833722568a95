import Foundation
import GatehouseAPI
import GatehouseServer
import GatehouseTestSupport
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

/// Login, the session list, ending sessions and Bearer authentication of `/v1`, at the wire
/// level (docs/api-v1.md), on every engine.
@Suite("/v1: login and sessions")
struct AccountsV1SessionTests {

    func sessionPath(_ id: String) -> String { V1Client.path(V1.Sessions.end.path, ["id": id]) }

    // MARK: Login

    @Test("login by email (any case): 201 AuthSession with a new working token", arguments: TestEngine.once)
    func login_byEmail_is201WithNewSession(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let signup = try await app.v1.signedUp(email: "ann@example.com", tag: "ann")

            // MUT
            let response = try await app.v1.post(V1.Sessions.login.path, json: #"{"identifier":"ANN@Example.com","password":"secret-91!","device":"Pixel 8"}"#)

            // validate
            #expect(response.status == .created, "\(response.text)")
            #expect(response.mediaType == "application/json")
            let session = try response.decoded(as: AuthSession.self)
            #expect(session.tokenType == "Bearer")
            #expect(session.token != signup.token)
            #expect(session.sessionId != signup.sessionId)
            #expect(session.expiresAt == app.clock.now.addingTimeInterval(app.configuration.limits.sessionTTL))
            #expect(session.account.id == signup.account.id)
            #expect(try await app.v1.me(session.token).id == signup.account.id)
        }
    }

    @Test("login by tag, in any case", arguments: TestEngine.once)
    func login_byTag_is201(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let signup = try await app.v1.signedUp(email: "ann@example.com", tag: "ann.smith")

            // MUT
            let byTag = try await app.v1.login("ann.smith", "secret-91!")
            let byCapitals = try await app.v1.login("Ann.Smith", "secret-91!")
            let byHandle = try await app.v1.login("@ann.smith", "secret-91!")

            // validate
            #expect(byTag.account.id == signup.account.id)
            #expect(byCapitals.account.id == signup.account.id)
            #expect(byHandle.account.id == signup.account.id)
        }
    }

    @Test("login by phone (a phone sign-up), in any common format", arguments: TestEngine.once)
    func login_byPhone_is201(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let signup = try await app.v1.signedUp(phone: "+79123456789")

            // MUT
            let e164 = try await app.v1.login("+79123456789", "secret-91!")
            let typed = try await app.v1.login("8 (912) 345-67-89", "secret-91!")

            // validate
            #expect(e164.account.id == signup.account.id)
            #expect(typed.account.id == signup.account.id)
            #expect(e164.account.phone == "+79123456789" && e164.account.phoneVerified)
        }
    }

    @Test("unknown account and wrong password: byte-identical 400 invalid_credentials", arguments: TestEngine.once)
    func login_unknownAccountAndWrongPassword_areByteIdentical(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            _ = try await app.v1.signedUp(email: "ann@example.com", tag: "ann")

            // MUT
            let wrong = try await app.v1.post(V1.Sessions.login.path, LoginRequest(identifier: "ann@example.com", password: "wrong1!x"))
            let unknownEmail = try await app.v1.post(V1.Sessions.login.path, LoginRequest(identifier: "nobody@example.com", password: "wrong1!x"))
            let unknownTag = try await app.v1.post(V1.Sessions.login.path, LoginRequest(identifier: "nobody", password: "wrong1!x"))
            let unknownPhone = try await app.v1.post(V1.Sessions.login.path, LoginRequest(identifier: "+79990000000", password: "wrong1!x"))

            // validate
            try expectProblem(wrong, .badRequest, .invalidCredentials)
            for other in [unknownEmail, unknownTag, unknownPhone] {
                try expectProblem(other, .badRequest, .invalidCredentials)
                #expect(other.text == wrong.text)
                #expect(other.headers[.contentType] == wrong.headers[.contentType])
            }
        }
    }

    @Test("failed logins per account are throttled after the configured number: 429 with Retry-After", arguments: TestEngine.once)
    func login_afterConfiguredFailuresForAccount_is429EvenWithTheRightPassword(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.limits.loginFailuresPerAccount = 3 }) { app in
            // setup
            _ = try await app.v1.signedUp(email: "ann@example.com")
            for _ in 1...3 {
                try expectProblem(try await app.v1.post(V1.Sessions.login.path, LoginRequest(identifier: "ann@example.com", password: "wrong1!x")), .badRequest, .invalidCredentials)
            }

            // MUT
            let blocked = try await app.v1.post(V1.Sessions.login.path, LoginRequest(identifier: "ann@example.com", password: "secret-91!"))

            // validate
            let problem = try expectProblem(blocked, .tooManyRequests, .rateLimited)
            let retryAfter = try #require(blocked.headers[.retryAfter].flatMap(Int.init))
            #expect(retryAfter > 0 && retryAfter <= Int(app.configuration.limits.loginFailureWindow))
            #expect(problem.retryAfter == retryAfter)
            app.clock.advance(by: app.configuration.limits.loginFailureWindow + 1)
            _ = try await app.v1.login("ann@example.com", "secret-91!")
        }
    }

    @Test("failed logins per client address are throttled across accounts", arguments: TestEngine.once)
    func login_afterConfiguredFailuresFromAddress_is429(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.limits.loginFailuresPerIP = 4 }) { app in
            // setup
            for i in 1...4 {
                let response = try await app.v1.post(V1.Sessions.login.path, LoginRequest(identifier: "user\(i)@example.com", password: "wrong1!x"))
                try expectProblem(response, .badRequest, .invalidCredentials)
            }

            // MUT
            let blocked = try await app.v1.post(V1.Sessions.login.path, LoginRequest(identifier: "user9@example.com", password: "wrong1!x"))

            // validate
            let problem = try expectProblem(blocked, .tooManyRequests, .rateLimited)
            #expect(blocked.headers[.retryAfter] != nil)
            #expect(problem.retryAfter.map(String.init) == blocked.headers[.retryAfter])
        }
    }

    // MARK: The session list

    @Test("GET /v1/sessions lists my sessions newest first, with the login's device and the current one marked", arguments: TestEngine.once)
    func sessions_listNewestFirstWithDeviceAndCurrent(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let signup = try await app.v1.signedUp(email: "ann@example.com", device: "Signup browser")
            app.clock.advance(by: 10)
            let tablet = try await app.v1.login("ann@example.com", "secret-91!", device: "iPad, iPadOS 18")
            app.clock.advance(by: 10)
            let phone = try await app.v1.login("ann@example.com", "secret-91!", device: "Pixel 8")
            _ = try await app.v1.signedUp(email: "bob@example.com", device: "Not mine")

            // MUT
            let response = try await app.v1.get(V1.Sessions.login.path, token: tablet.token)

            // validate
            #expect(response.status == .ok, "\(response.text)")
            #expect(response.mediaType == "application/json")
            let sessions = try response.decoded(as: SessionList.self).sessions
            #expect(sessions.map(\.id) == [phone.sessionId, tablet.sessionId, signup.sessionId])
            #expect(sessions.map(\.device) == ["Pixel 8", "iPad, iPadOS 18", "Signup browser"])
            #expect(sessions.map(\.current) == [false, true, false])
            #expect(sessions[0].createdAt == app.clock.now)
            #expect(sessions[1].createdAt == app.clock.now.addingTimeInterval(-10))
            #expect(sessions[2].createdAt == app.clock.now.addingTimeInterval(-20))
            #expect(sessions[0].expiresAt == phone.expiresAt)
            // the same list, seen from another session, marks that one
            #expect(try await app.v1.sessions(phone.token).map(\.current) == [true, false, false])
        }
    }

    @Test("DELETE /v1/sessions/{id} ends one of my sessions: 204, then its token is 401", arguments: TestEngine.once)
    func session_deleteOne_endsItAndItsTokenIs401(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let mine = try await app.v1.signedUp(email: "ann@example.com")
            let other = try await app.v1.login("ann@example.com", "secret-91!", device: "Old phone")

            // MUT
            let response = try await app.v1.delete(sessionPath(other.sessionId.uuidString), token: mine.token)

            // validate
            #expect(response.status == .noContent, "\(response.text)")
            #expect(response.body.readableBytes == 0)
            let ended = try await app.v1.get(V1.Accounts.me.path, token: other.token)
            try expectProblem(ended, .unauthorized, .unauthorized)
            #expect(ended.headers[.wwwAuthenticate]?.hasPrefix("Bearer") == true)
            #expect(try await app.v1.sessions(mine.token).map(\.id) == [mine.sessionId])
            // lower-case ids are the same id
            let again = try await app.v1.delete(sessionPath(other.sessionId.uuidString.lowercased()), token: mine.token)
            try expectProblem(again, .notFound, .sessionNotFound)
        }
    }

    @Test("another account's session id is 404 session_not_found and that session lives on", arguments: TestEngine.once)
    func session_deleteOtherAccountsSession_is404(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let ann = try await app.v1.signedUp(email: "ann@example.com")
            let bob = try await app.v1.signedUp(email: "bob@example.com")

            // MUT
            let response = try await app.v1.delete(sessionPath(bob.sessionId.uuidString), token: ann.token)

            // validate
            try expectProblem(response, .notFound, .sessionNotFound)
            #expect(try await app.v1.get(V1.Accounts.me.path, token: bob.token).status == .ok)
            let unknown = try await app.v1.delete(sessionPath(UUID().uuidString), token: ann.token)
            try expectProblem(unknown, .notFound, .sessionNotFound)
        }
    }

    @Test("a malformed session id is 404", arguments: TestEngine.once)
    func session_deleteMalformedId_is404(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let ann = try await app.v1.signedUp(email: "ann@example.com")

            for id in ["not-a-uuid", "12345", "00000000-0000-0000-0000-00000000000g"] {
                // MUT
                let response = try await app.v1.delete(sessionPath(id), token: ann.token)

                // validate
                let problem = try expectProblem(response, .notFound, nil)
                #expect(problem.code == .sessionNotFound || problem.code == .notFound, "\(id): \(response.text)")
            }
            #expect(try await app.v1.get(V1.Accounts.me.path, token: ann.token).status == .ok)
        }
    }

    @Test("DELETE /v1/sessions?scope=others ends all but the current session: 200 with the count", arguments: TestEngine.once)
    func sessions_deleteOthers_revokesAllButCurrent(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let current = try await app.v1.signedUp(email: "ann@example.com")
            let b = try await app.v1.login("ann@example.com", "secret-91!")
            let c = try await app.v1.login("ann@example.com", "secret-91!")
            let stranger = try await app.v1.signedUp(email: "bob@example.com")

            // MUT
            let response = try await app.v1.delete("\(V1.Sessions.login.path)?scope=others", token: current.token)

            // validate
            #expect(response.status == .ok, "\(response.text)")
            #expect(response.mediaType == "application/json")
            #expect(try response.decoded(as: SessionsRevoked.self) == SessionsRevoked(revoked: 2))
            #expect(response.text == #"{"revoked":2}"#)
            #expect(try await app.v1.get(V1.Accounts.me.path, token: current.token).status == .ok)
            #expect(try await app.v1.get(V1.Accounts.me.path, token: b.token).status == .unauthorized)
            #expect(try await app.v1.get(V1.Accounts.me.path, token: c.token).status == .unauthorized)
            #expect(try await app.v1.get(V1.Accounts.me.path, token: stranger.token).status == .ok)
            #expect(try await app.v1.sessions(current.token).map(\.id) == [current.sessionId])
            // nothing left to end
            let none = try await app.v1.delete("\(V1.Sessions.login.path)?scope=others", token: current.token)
            #expect(try none.decoded(as: SessionsRevoked.self) == SessionsRevoked(revoked: 0))
        }
    }

    @Test("DELETE /v1/sessions with another scope is 400 invalid_parameter and ends nothing", arguments: TestEngine.once)
    func sessions_deleteWithUnknownScope_isInvalidParameter(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let current = try await app.v1.signedUp(email: "ann@example.com")
            let other = try await app.v1.login("ann@example.com", "secret-91!")

            // MUT
            let response = try await app.v1.delete("\(V1.Sessions.login.path)?scope=all", token: current.token)

            // validate
            try expectProblem(response, .badRequest, .invalidParameter)
            #expect(try await app.v1.get(V1.Accounts.me.path, token: other.token).status == .ok)
            #expect(try await app.v1.get(V1.Accounts.me.path, token: current.token).status == .ok)
        }
    }

    // MARK: Logout and Bearer authentication

    @Test("logout (DELETE /v1/sessions/current): 204, then the token is 401 with WWW-Authenticate: Bearer", arguments: TestEngine.once)
    func logout_endsCurrentSessionOnly(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let leaving = try await app.v1.signedUp(email: "ann@example.com")
            let staying = try await app.v1.login("ann@example.com", "secret-91!")

            // MUT
            let response = try await app.v1.delete(V1.Sessions.logout.path, token: leaving.token)

            // validate
            #expect(response.status == .noContent, "\(response.text)")
            #expect(response.body.readableBytes == 0)
            let after = try await app.v1.get(V1.Accounts.me.path, token: leaving.token)
            try expectProblem(after, .unauthorized, .unauthorized)
            #expect(after.headers[.wwwAuthenticate]?.hasPrefix("Bearer") == true, "\(after.headers)")
            #expect(try await app.v1.get(V1.Accounts.me.path, token: staying.token).status == .ok)
            // the ended token cannot log out twice
            try expectProblem(try await app.v1.delete(V1.Sessions.logout.path, token: leaving.token), .unauthorized, .unauthorized)
        }
    }

    @Test("a missing, garbage or non-Bearer Authorization is a 401 problem with WWW-Authenticate: Bearer", arguments: TestEngine.once)
    func me_withoutValidBearer_is401Problem(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let session = try await app.v1.signedUp(email: "ann@example.com")
            let requests: [(String, HTTPFields)] = [
                ("missing", [:]),
                ("garbage", [.authorization: "Bearer not-a-token"]),
                ("empty", [.authorization: "Bearer "]),
                ("basic", [.authorization: "Basic YW5uOnNlY3JldDEh"]),
                ("bare token", [.authorization: session.token]),
            ]

            for (label, headers) in requests {
                // MUT
                let response = try await app.v1.get(V1.Accounts.me.path, headers: headers)

                // validate
                try expectProblem(response, .unauthorized, .unauthorized)
                #expect(response.headers[.wwwAuthenticate]?.hasPrefix("Bearer") == true, "\(label): \(response.headers)")
            }
            // every route behind Bearer, without one
            let guarded: [(HTTPRequest.Method, String)] = [
                (.get, V1.Sessions.login.path), (.delete, "\(V1.Sessions.login.path)?scope=others"), (.delete, V1.Sessions.logout.path),
                (.delete, sessionPath(session.sessionId.uuidString)), (.patch, V1.Accounts.me.path), (.post, V1.Accounts.changePassword.path),
                (.post, V1.Accounts.requestEmailChange.path), (.delete, V1.Accounts.requestEmailChange.path), (.post, V1.Accounts.verifyEmailChange.path), (.post, V1.Accounts.requestPhoneVerification.path), (.post, V1.Accounts.verifyPhone.path),
                (.delete, V1.Accounts.uploadAvatar.path),
            ]
            for (method, path) in guarded {
                let body: ByteBuffer? = method == .post || method == .patch ? ByteBuffer(string: "{}") : nil
                let response = try await app.v1.send(method, path, body: body, contentType: body == nil ? nil : "application/json")
                try expectProblem(response, .unauthorized, .unauthorized)
                #expect(response.headers[.wwwAuthenticate]?.hasPrefix("Bearer") == true, "\(method) \(path)")
            }
            #expect(try await app.v1.get(V1.Accounts.me.path, token: session.token).status == .ok)
        }
    }

    @Test("a session expires after its lifetime: 401", arguments: TestEngine.once)
    func session_afterLifetime_is401(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let session = try await app.v1.signedUp(email: "ann@example.com")

            // MUT + validate
            app.clock.advance(by: app.configuration.limits.sessionTTL - 1)
            #expect(try await app.v1.get(V1.Accounts.me.path, token: session.token).status == .ok)
            app.clock.advance(by: 2)
            let expired = try await app.v1.get(V1.Accounts.me.path, token: session.token)
            try expectProblem(expired, .unauthorized, .unauthorized)
            #expect(expired.headers[.wwwAuthenticate]?.hasPrefix("Bearer") == true)
        }
    }
}
