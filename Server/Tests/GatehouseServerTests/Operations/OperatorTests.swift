import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import GatehouseServer
import GatehouseTestSupport
import Testing

/// Operators (docs/operators.md, "The console"): a TOTP second factor as RFC 6238 computes it, a
/// code that works once, sessions that end when idle or after their span, apart from people's
/// sessions; and no secret of theirs or of an admin key in the audit export.
@Suite("Operators and their second factor")
struct OperatorTests {
    @Test("TOTP: RFC 6238's SHA-1 test vectors (six digits), base32 both ways, and a code accepted one step either side, once")
    func totpVectors() throws {
        // setup: RFC 6238 appendix B's seed "12345678901234567890"
        let totp = TOTP(secret: Array("12345678901234567890".utf8))

        // MUT / validate
        for (time, code) in [(59.0, "287082"), (1_111_111_109, "081804"), (1_111_111_111, "050471"), (1_234_567_890, "005924"),
                             (2_000_000_000, "279037"), (20_000_000_000, "353130")] {
            #expect(totp.code(at: Date(timeIntervalSince1970: time)) == code, "at \(time)")
        }
        #expect(Base32.encode(Array("12345678901234567890".utf8)) == "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ")
        #expect(Base32.decode("gezdgnbvgy3tqojqgezdgnbvgy3tqojq") == Array("12345678901234567890".utf8))
        let now = Date(timeIntervalSince1970: 1_234_567_890)
        let step = TOTP.step(at: now)
        #expect(totp.match(totp.code(step: step - 1), at: now, after: 0) == step - 1, "a clock a step behind")
        #expect(totp.match(totp.code(step: step + 1), at: now, after: 0) == step + 1)
        #expect(totp.match(totp.code(step: step - 2), at: now, after: 0) == nil, "too old")
        #expect(totp.match(totp.code(step: step), at: now, after: step) == nil, "a code used once is spent")
        #expect(totp.match("12345", at: now, after: 0) == nil && totp.match("abcdef", at: now, after: 0) == nil)
    }

    @Test("sign-in: password and the current code open a session; the same code again, a wrong password, a disabled operator and a person's token do not; idle and past its span, the session ends", arguments: TestEngine.once)
    func signInAndSessions(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let made = try await ConsoleCommands.createOperator(configuration: app.configuration, name: "Alice", role: "support",
                                                                password: "Operator-pass-1", as: "root")
            let totp = TOTP(secret: try #require(Base32.decode(made.secret)))
            let operators = app.services.operators
            let person = try await app.v1.signedUp(email: "ann@example.com", tag: "ann")

            // MUT
            let code = totp.code(at: app.clock.now)
            let (token, session) = try await operators.signIn(name: "alice", password: "Operator-pass-1", code: code, ip: "10.0.0.1", device: nil, requestID: nil)
            await #expect(throws: GatehouseError.self, "the same code twice") {
                _ = try await operators.signIn(name: "alice", password: "Operator-pass-1", code: code, ip: "10.0.0.1", device: nil, requestID: nil)
            }
            app.clock.advance(by: 30)
            await #expect(throws: GatehouseError.self, "a wrong password with a right code") {
                _ = try await operators.signIn(name: "alice", password: "Operator-pass-2", code: totp.code(at: app.clock.now), ip: "10.0.0.1", device: nil, requestID: nil)
            }
            let live = try await operators.session(token: token)
            let personAsOperator = try await operators.session(token: person.token)
            let operatorAsPerson = try await app.v1.get(V1.Accounts.me.path, token: token)
            app.clock.advance(by: app.configuration.operators.sessionIdle + 1)
            let idle = try await operators.session(token: token)
            app.clock.advance(by: 30)
            let (second, _) = try await operators.signIn(name: "alice", password: "Operator-pass-1", code: totp.code(at: app.clock.now), ip: nil, device: nil, requestID: nil)
            #expect(try await ConsoleCommands.disableOperator(configuration: app.configuration, name: "alice", as: "root"))
            let afterDisable = try await operators.session(token: second)
            app.clock.advance(by: 30)
            await #expect(throws: GatehouseError.self, "a disabled operator") {
                _ = try await operators.signIn(name: "alice", password: "Operator-pass-1", code: totp.code(at: app.clock.now), ip: nil, device: nil, requestID: nil)
            }

            // validate
            #expect(made.name == "alice" && made.otpauth.contains("secret=\(made.secret)") && made.otpauth.contains("issuer=Gatehouse"))
            #expect(session.who.role == .support && live?.who.name == "alice" && live?.csrf == session.csrf)
            #expect(personAsOperator == nil, "a person's session is no operator's")
            #expect(operatorAsPerson.status == .unauthorized, "an operator's session is no person's")
            #expect(idle == nil, "idle past the limit, the session ended")
            #expect(afterDisable == nil, "disabling ends the sessions")
            let failures = try await app.services.audit.events(AuditLog.Query(kinds: [.operatorSignInFailed]))
            #expect(failures.map(\.count).reduce(0, +) == 3 && failures.allSatisfy { $0.actorID == "alice" })
            let signedIn = try await app.services.audit.events(AuditLog.Query(kinds: [.operatorSignedIn, .operatorCreated, .operatorDisabled]))
            #expect(signedIn.map(\.kind) == ["operator.disabled", "operator.signed_in", "operator.signed_in", "operator.created"])
        }
    }

    @Test("an operator's session ends at its span however busy; a name is refused from an address after its failure budget there, even with the right code, and not from another", arguments: TestEngine.once)
    func spanAndBudget(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let made = try await ConsoleCommands.createOperator(configuration: app.configuration, name: "bob", role: "admin", password: "Operator-pass-1", as: nil)
            let totp = TOTP(secret: try #require(Base32.decode(made.secret)))
            let operators = app.services.operators
            let (token, _) = try await operators.signIn(name: "bob", password: "Operator-pass-1", code: totp.code(at: app.clock.now), ip: "10.0.0.2", device: nil, requestID: nil)

            // MUT: busy every 10 minutes past the span
            var alive: [Bool] = []
            for _ in 0..<Int(app.configuration.operators.sessionMax / 600) {
                app.clock.advance(by: 600)
                alive.append(try await operators.session(token: token) != nil)
            }
            for _ in 0..<app.configuration.operators.signInFailuresPerName {
                _ = try? await operators.signIn(name: "bob", password: "wrong-password-1", code: "000000", ip: "10.0.0.2", device: nil, requestID: nil)
            }
            app.clock.advance(by: 30)
            var refusal: GatehouseError?
            do {
                _ = try await operators.signIn(name: "bob", password: "Operator-pass-1", code: totp.code(at: app.clock.now), ip: "10.0.0.2", device: nil, requestID: nil)
            } catch let error as GatehouseError { refusal = error }
            // From another address the budget is another's: failing for a name elsewhere keeps nobody out.
            let elsewhere = try await operators.signIn(name: "bob", password: "Operator-pass-1", code: totp.code(at: app.clock.now), ip: "10.0.0.3",
                                                       device: nil, requestID: nil)

            // validate
            #expect(alive.dropLast().allSatisfy { $0 } && alive.last == false, "\(alive)")
            #expect(elsewhere.session.who.name == "bob")
            guard case .rateLimited? = refusal?.kind else { Issue.record("expected a rate limit, got \(String(describing: refusal))"); return }
        }
    }

    @Test("the audit export holds no admin key, operator password, TOTP secret or code, nor an operator's session", arguments: TestEngine.once)
    func exportHoldsNoOperatorSecret(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let key = try #require(try await ConsoleCommands.createKey(configuration: app.configuration, name: "CRM", scopes: ["clients:write"], as: "root").key)
            let made = try await ConsoleCommands.createOperator(configuration: app.configuration, name: "carol", role: "admin", password: "Operator-pass-9", as: "root")
            let code = TOTP(secret: try #require(Base32.decode(made.secret))).code(at: app.clock.now)
            _ = try? await app.services.operators.signIn(name: "carol", password: "Operator-pass-8", code: code, ip: nil, device: nil, requestID: nil)
            let (token, _) = try await app.services.operators.signIn(name: "carol", password: "Operator-pass-9", code: code, ip: nil, device: nil, requestID: nil)
            let imported = try await app.v1.post(AdminAPI.importClients.path, body: .init(string: #"{"phone":"+79123456789","room":"1"}"#),
                                                 contentType: "application/x-ndjson", token: key)
            #expect(imported.status == .ok)

            // MUT
            var lines: [String] = []
            _ = try await AuditCommands.export(configuration: app.configuration, since: Date(timeIntervalSince1970: 0), until: nil, account: nil, kinds: []) { lines.append($0) }

            // validate
            let text = lines.joined(separator: "\n")
            #expect(text.contains("admin_key.created") && text.contains("operator.signed_in") && text.contains("clients.imported"))
            for secret in [key, String(key.dropFirst(AdminKeys.prefix.count)), "Operator-pass-9", "Operator-pass-8", made.secret, code, token] {
                #expect(!text.contains(secret), "a secret in the export")
            }
        }
    }
}
