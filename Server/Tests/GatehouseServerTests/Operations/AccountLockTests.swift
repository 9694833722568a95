import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import GatehouseServer
import GatehouseTestSupport
import HTTPTypes
import Testing

/// Locked accounts (docs/operators.md, "Locking an account"): a lock ends every session and
/// refuses every sign-in, on each surface in its own form, but only to someone who proved they
/// hold the account; an unlock lets them back in. Both are in the audit trail with their reason.
@Suite("Locked accounts")
struct AccountLockTests {
    @Test("lock: the sessions end (401), the right password is refused with account_locked on /api (Russian text, 400) and /v1 (403 problem), a wrong one stays invalid_credentials; unlock lets them back in; both audited with reason and actor", arguments: TestEngine.once)
    func lockRefusesEverySignIn(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            try await app.registerPhoneAccount(email: "fpi@bk.ru", confirmingEmail: true)
            let token = try await app.login("fpi@bk.ru", "secret-91!")

            // MUT
            let locked = try await AccountCommands.setLocked(true, configuration: app.configuration, query: "fpi@bk.ru", reason: "reported stolen phone", as: "alice")
            let again = try await AccountCommands.setLocked(true, configuration: app.configuration, query: "fpi@bk.ru", reason: "twice", as: "alice")
            let oldSession = try await app.get(PhoneAccountsAPI.Path.user, token: token)
            let apiRight = try await app.postForm(PhoneAccountsAPI.Path.login, [("login", "fpi@bk.ru"), ("password", "secret-91!")])
            let apiWrong = try await app.postForm(PhoneAccountsAPI.Path.login, [("login", "fpi@bk.ru"), ("password", "not-it-42")])
            let v1Right = try await app.v1.post(V1.Sessions.login.path, json: #"{"identifier":"fpi@bk.ru","password":"secret-91!"}"#)
            let shown = try await AccountCommands.show(configuration: app.configuration, query: "fpi@bk.ru")
            let unlocked = try await AccountCommands.setLocked(false, configuration: app.configuration, query: "+79123456789", reason: "owner proved identity", as: "bob")
            let back = try await app.postForm(PhoneAccountsAPI.Path.login, [("login", "fpi@bk.ru"), ("password", "secret-91!")])

            // validate
            #expect(locked && !again, "a second lock changes nothing")
            #expect(oldSession.status == .unauthorized, "the lock ended the session")
            #expect(apiRight.status == .badRequest && apiRight.headers[HTTPField.Name("X-Error-Code")!] == "account_locked")
            #expect(apiRight.text == "Аккаунт заблокирован. Обратитесь в поддержку.", "\(apiRight.text)")
            #expect(apiWrong.headers[HTTPField.Name("X-Error-Code")!] == "invalid_credentials", "a guesser is not told of the lock")
            #expect(v1Right.status == .forbidden && v1Right.text.contains("account_locked"), "\(v1Right.text)")
            #expect(shown.locked?.reason.contains("reported stolen phone") == true)
            #expect(unlocked && back.status == .ok, "\(back.text)")
            let events = try await app.services.audit.events(AuditLog.Query(kinds: [.accountLocked, .accountUnlocked]))
            #expect(events.map(\.kind) == ["account.unlocked", "account.locked"])
            #expect(events.last?.actorType == "system" && events.last?.actorID == "alice" && events.last?.detail["reason"] == "reported stolen phone")
            #expect(events.last?.detail["sessions"] == "1")
            #expect(events.first?.actorID == "bob" && events.first?.detail["reason"] == "owner proved identity")
        }
    }
}
