import Foundation
import GatehouseAPI
import GatehouseServer
import GatehouseTestSupport
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

/// `/v1/me` and what hangs off it: the profile merge patch, the password, recovery, the email
/// change, the phone and the avatar, at the wire level (docs/api-v1.md), on every engine.
@Suite("/v1: profile, password, recovery, email, phone and avatar")
struct AccountsV1ProfileTests {

    // MARK: Profile

    @Test("GET /v1/me answers the account", arguments: TestEngine.once)
    func me_answersTheAccount(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let session = try await app.v1.signedUp(email: "ann@example.com", tag: "ann")

            // MUT
            let response = try await app.v1.get(V1.Accounts.me.path, token: session.token)

            // validate
            #expect(response.status == .ok, "\(response.text)")
            #expect(response.mediaType == "application/json")
            let account = try response.decoded(as: Account.self)
            #expect(account == session.account)
            #expect(account.email == "ann@example.com" && account.emailConfirmed && account.tag == "ann")
            #expect(response.text.contains(#""emailConfirmed":true"#))
            #expect(response.text.contains(#""id":"\#(account.id.uuidString)""#) || response.text.contains(#""id":"\#(account.id.uuidString.lowercased())""#))
        }
    }

    @Test("PATCH /v1/me is a merge patch: a member left out is unchanged, null clears it", arguments: TestEngine.once)
    func patchMe_isAMergePatch(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let session = try await app.v1.signedUp(email: "ann@example.com", tag: "ann", firstName: "Ann", lastName: "Smith")
            app.clock.advance(by: 60)

            // MUT: set some members
            let first = try await app.v1.patch(V1.Accounts.me.path, json: #"{"firstName":"Anna","middleName":"Maria","birthday":"1990-05-17","locale":"ru"}"#, token: session.token)

            // validate
            #expect(first.status == .ok, "\(first.text)")
            var account = try first.decoded(as: Account.self)
            #expect(account.firstName == "Anna")
            #expect(account.lastName == "Smith")
            #expect(account.middleName == "Maria")
            #expect(account.birthday == "1990-05-17")
            #expect(account.locale == "ru")
            #expect(account.tag == "ann" && account.email == "ann@example.com")
            #expect(account.updatedAt == app.clock.now)
            #expect(account.createdAt == session.account.createdAt)

            // MUT: clear two, leave the rest out
            let second = try await app.v1.patch(V1.Accounts.me.path, json: #"{"lastName":null,"birthday":null}"#, token: session.token)

            // validate
            #expect(second.status == .ok, "\(second.text)")
            account = try second.decoded(as: Account.self)
            #expect(account.lastName == nil && account.birthday == nil)
            #expect(account.firstName == "Anna" && account.middleName == "Maria" && account.locale == "ru" && account.tag == "ann")

            // an empty patch changes nothing; GET shows the same
            let empty = try await app.v1.patch(V1.Accounts.me.path, json: "{}", token: session.token)
            #expect(empty.status == .ok)
            #expect(try empty.decoded(as: Account.self) == account)
            #expect(try await app.v1.me(session.token) == account)
            // the wire type's own encoding (double optionals) means the same
            let typed = try await app.v1.patch(V1.Accounts.me.path, ProfileUpdate(firstName: .some(nil)), token: session.token)
            #expect(try typed.decoded(as: Account.self).firstName == nil)
            #expect(try await app.v1.me(session.token).middleName == "Maria")
        }
    }

    @Test("PATCH /v1/me changes the tag under the tag rules and uniqueness; a tag cannot be cleared", arguments: TestEngine.once)
    func patchMe_tag_changesUnderRulesAndCannotBeCleared(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            _ = try await app.v1.signedUp(email: "ann@example.com", tag: "ann")
            let bob = try await app.v1.signedUp(email: "bob@example.com", tag: "bob")
            func tagPath(_ tag: String) -> String { V1Client.path(V1.Accounts.tag.path, ["tag": tag]) }

            // MUT + validate: a new tag, typed with @ and capitals
            let changed = try await app.v1.patch(V1.Accounts.me.path, json: #"{"tag":"@Carol"}"#, token: bob.token)
            #expect(changed.status == .ok, "\(changed.text)")
            #expect(try changed.decoded(as: Account.self).tag == "carol")
            #expect(try await app.v1.get(tagPath("bob")).decoded(as: TagAvailability.self).available)
            #expect(try await app.v1.get(tagPath("carol")).decoded(as: TagAvailability.self).available == false)
            _ = try await app.v1.login("carol", "secret-91!")

            // my own tag in another case is not "taken"
            let same = try await app.v1.patch(V1.Accounts.me.path, json: #"{"tag":"CAROL"}"#, token: bob.token)
            #expect(same.status == .ok, "\(same.text)")

            // someone else's, in any case
            let taken = try await app.v1.patch(V1.Accounts.me.path, json: #"{"tag":"ANN"}"#, token: bob.token)
            #expect(try expectProblem(taken, .conflict, .tagTaken).field == "tag")

            // against the rule
            let invalid = try await app.v1.patch(V1.Accounts.me.path, json: #"{"tag":"ab"}"#, token: bob.token)
            #expect(try expectProblem(invalid, .badRequest, .invalidTag).field == "tag")

            // cleared
            let cleared = try await app.v1.patch(V1.Accounts.me.path, json: #"{"tag":null}"#, token: bob.token)
            try expectProblem(cleared, .badRequest, nil)
            #expect(try await app.v1.me(bob.token).tag == "carol")
        }
    }

    @Test("a birthday that is not a real yyyy-MM-dd day is invalid_date", arguments: TestEngine.once)
    func patchMe_badBirthday_isInvalidDate(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let session = try await app.v1.signedUp(email: "ann@example.com")

            for bad in ["1990-02-30", "17.05.1990", "1990-5-17", "yesterday", "1990-05-17T10:00:00Z"] {
                // MUT
                let response = try await app.v1.patch(V1.Accounts.me.path, ProfileUpdate(birthday: .some(bad)), token: session.token)

                // validate
                let problem = try expectProblem(response, .badRequest, .invalidDate)
                #expect(problem.field == "birthday", "\(bad): \(response.text)")
            }
            #expect(try await app.v1.me(session.token).birthday == nil)
        }
    }

    @Test("a locale other than en or ru is invalid_locale", arguments: TestEngine.once)
    func patchMe_badLocale_isInvalidLocale(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let session = try await app.v1.signedUp(email: "ann@example.com", locale: "en")

            for bad in ["fr", "xx", "english"] {
                // MUT
                let response = try await app.v1.patch(V1.Accounts.me.path, ProfileUpdate(locale: .some(bad)), token: session.token)

                // validate
                let problem = try expectProblem(response, .badRequest, .invalidLocale)
                #expect(problem.field == "locale", "\(bad): \(response.text)")
            }
            #expect(try await app.v1.me(session.token).locale == "en")
        }
    }

    @Test("a member over the length limit is field_too_long", arguments: TestEngine.once)
    func patchMe_overlongName_isFieldTooLong(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let session = try await app.v1.signedUp(email: "ann@example.com", firstName: "Ann")
            let long = String(repeating: "x", count: app.configuration.limits.maxFieldLength + 1)

            // MUT
            let response = try await app.v1.patch(V1.Accounts.me.path, ProfileUpdate(firstName: .some(long)), token: session.token)

            // validate
            #expect(try expectProblem(response, .badRequest, .fieldTooLong).field == "firstName")
            #expect(try await app.v1.me(session.token).firstName == "Ann")
        }
    }

    // MARK: Password

    @Test("a password change with the wrong current password is invalid_credentials and changes nothing", arguments: TestEngine.once)
    func passwordChange_withWrongCurrent_isInvalidCredentials(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let session = try await app.v1.signedUp(email: "ann@example.com")
            let other = try await app.v1.login("ann@example.com", "secret-91!")

            // MUT
            let response = try await app.v1.post(V1.Accounts.changePassword.path, PasswordChange(currentPassword: "wrong1!x", newPassword: "brand-new-1!"), token: session.token)

            // validate
            try expectProblem(response, .badRequest, .invalidCredentials)
            #expect(try await app.v1.get(V1.Accounts.me.path, token: other.token).status == .ok)
            _ = try await app.v1.login("ann@example.com", "secret-91!")
            #expect(try await app.v1.post(V1.Sessions.login.path, LoginRequest(identifier: "ann@example.com", password: "brand-new-1!")).status == .badRequest)
        }
    }

    @Test("wrong current passwords count against the account's login budget: then 429, even when right", arguments: TestEngine.once)
    func passwordChange_wrongCurrentPasswords_areThrottledWithLogins(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.limits.loginFailuresPerAccount = 3 }) { app in
            // setup
            let session = try await app.v1.signedUp(email: "ann@example.com")
            for _ in 0..<3 {
                let wrong = try await app.v1.post(V1.Accounts.changePassword.path, PasswordChange(currentPassword: "wrong1!x", newPassword: "brand-new-1!"), token: session.token)
                try expectProblem(wrong, .badRequest, .invalidCredentials)
            }

            // MUT
            let right = try await app.v1.post(V1.Accounts.changePassword.path, PasswordChange(currentPassword: "secret-91!", newPassword: "brand-new-1!"), token: session.token)
            let login = try await app.v1.post(V1.Sessions.login.path, LoginRequest(identifier: "ann@example.com", password: "secret-91!"))

            // validate
            try expectProblem(right, .tooManyRequests, .rateLimited)
            #expect(right.headers[.retryAfter] != nil)
            try expectProblem(login, .tooManyRequests, .rateLimited)
        }
    }

    @Test("a password change: 204, ends every other session, keeps this one; the new password logs in", arguments: TestEngine.once)
    func passwordChange_endsOtherSessionsAndKeepsCurrent(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let current = try await app.v1.signedUp(email: "ann@example.com")
            let other = try await app.v1.login("ann@example.com", "secret-91!")
            let weak = try await app.v1.post(V1.Accounts.changePassword.path, PasswordChange(currentPassword: "secret-91!", newPassword: "abc"), token: current.token)
            try expectProblem(weak, .badRequest, .weakPassword)

            // MUT
            let response = try await app.v1.post(V1.Accounts.changePassword.path, PasswordChange(currentPassword: "secret-91!", newPassword: "brand-new-1!"), token: current.token)

            // validate
            #expect(response.status == .noContent, "\(response.text)")
            #expect(response.body.readableBytes == 0)
            #expect(try await app.v1.get(V1.Accounts.me.path, token: current.token).status == .ok)
            try expectProblem(try await app.v1.get(V1.Accounts.me.path, token: other.token), .unauthorized, .unauthorized)
            #expect(try await app.v1.sessions(current.token).map(\.id) == [current.sessionId])
            _ = try await app.v1.login("ann@example.com", "brand-new-1!")
            try expectProblem(try await app.v1.post(V1.Sessions.login.path, LoginRequest(identifier: "ann@example.com", password: "secret-91!")), .badRequest, .invalidCredentials)
        }
    }

    // MARK: Recovery

    @Test("a recovery code request for an unknown address answers the same 202 as for a known one and sends nothing", arguments: TestEngine.once)
    func recoveryCode_forUnknownAddress_answersTheSameAndSendsNothing(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            _ = try await app.v1.signedUp(email: "ann@example.com")
            let before = try await app.v1.messages(to: "ann@example.com").count
            app.clock.advance(by: 61)

            // MUT
            let known = try await app.v1.post(V1.Accounts.recoveryCode.path, json: #"{"email":"ann@example.com"}"#)
            let unknown = try await app.v1.post(V1.Accounts.recoveryCode.path, json: #"{"email":"nobody@example.com"}"#)
            let unknownPhone = try await app.v1.post(V1.Accounts.recoveryCode.path, json: #"{"phone":"+79990000000"}"#)

            // validate
            #expect(known.status == .accepted, "\(known.text)")
            #expect(unknown.status == .accepted, "\(unknown.text)")
            #expect(unknownPhone.status == .accepted, "\(unknownPhone.text)")
            let sent = try known.decoded(as: CodeSent.self)
            #expect(sent.channel == .email && sent.destination == "ann@example.com")
            #expect(sent.expiresAt == app.clock.now.addingTimeInterval(600))
            #expect(unknown.headers[.contentType] == known.headers[.contentType])
            #expect(unknown.text.replacingOccurrences(of: "nobody@example.com", with: "ann@example.com") == known.text)
            #expect(try unknownPhone.decoded(as: CodeSent.self).channel == .sms)
            let mails = try await app.v1.messages(to: "ann@example.com")
            #expect(mails.count == before + 1)
            #expect(mails.first?.code != nil)
            #expect(try await app.v1.messages(to: "nobody@example.com").isEmpty)
            #expect(try await app.v1.messages(to: "+79990000000").isEmpty)

            // and the resend cooldown is the same for both: no timing tells them apart
            let knownAgain = try await app.v1.post(V1.Accounts.recoveryCode.path, json: #"{"email":"ann@example.com"}"#)
            let unknownAgain = try await app.v1.post(V1.Accounts.recoveryCode.path, json: #"{"email":"nobody@example.com"}"#)
            try expectProblem(knownAgain, .tooManyRequests, .resendTooSoon)
            try expectProblem(unknownAgain, .tooManyRequests, .resendTooSoon)
            #expect(knownAgain.headers[.retryAfter] == unknownAgain.headers[.retryAfter])
        }
    }

    @Test("recovery with the code sets the password, ends every session and mails a notice", arguments: TestEngine.once)
    func recovery_withCode_setsPasswordEndsAllSessionsAndNotifies(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let first = try await app.v1.signedUp(email: "ann@example.com")
            let second = try await app.v1.login("ann@example.com", "secret-91!")
            app.clock.advance(by: 61)
            #expect(try await app.v1.post(V1.Accounts.recoveryCode.path, CodeRequest(email: "ann@example.com")).status == .accepted)
            let code = try await app.v1.code(sentTo: "ann@example.com")
            let before = try await app.v1.messages(to: "ann@example.com").count

            // MUT
            let response = try await app.v1.post(V1.Accounts.recover.path, RecoveryRequest(email: "ann@example.com", code: code, password: "brand-new-1!"))

            // validate
            #expect(response.status == .noContent, "\(response.text)")
            #expect(response.body.readableBytes == 0)
            for old in [first, second] {
                let ended = try await app.v1.get(V1.Accounts.me.path, token: old.token)
                try expectProblem(ended, .unauthorized, .unauthorized)
            }
            let mails = try await app.v1.messages(to: "ann@example.com")
            #expect(mails.count == before + 1)
            let notice = try #require(mails.first)
            #expect(notice.channel == "email")
            #expect(notice.code == nil, "a notice, not a code: \(notice.body)")
            #expect(notice.subject != nil)
            #expect(!notice.body.contains("brand-new-1!"), "a mail never carries the password")
            _ = try await app.v1.login("ann@example.com", "brand-new-1!")
            try expectProblem(try await app.v1.post(V1.Sessions.login.path, LoginRequest(identifier: "ann@example.com", password: "secret-91!")), .badRequest, .invalidCredentials)
            // the code was single use
            let reused = try await app.v1.post(V1.Accounts.recover.path, RecoveryRequest(email: "ann@example.com", code: code, password: "another-1!"))
            try expectProblem(reused, .badRequest, nil)
            _ = try await app.v1.login("ann@example.com", "brand-new-1!")
        }
    }

    @Test("recovery refuses a wrong code (attemptsLeft), a weak password and a request without address", arguments: TestEngine.once)
    func recovery_withWrongCodeOrWeakPassword_isRefused(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let session = try await app.v1.signedUp(email: "ann@example.com")
            app.clock.advance(by: 61)
            let sent = try await app.v1.post(V1.Accounts.recoveryCode.path, CodeRequest(email: "ann@example.com")).decoded(as: CodeSent.self)
            let code = try await app.v1.code(sentTo: "ann@example.com")
            let wrong = code == "000000" ? "111111" : "000000"

            // MUT + validate
            let wrongCode = try await app.v1.post(V1.Accounts.recover.path, RecoveryRequest(email: "ann@example.com", code: wrong, password: "brand-new-1!"))
            #expect(try expectProblem(wrongCode, .badRequest, .invalidCode).attemptsLeft == sent.attemptsAllowed - 1)
            let weak = try await app.v1.post(V1.Accounts.recover.path, RecoveryRequest(email: "ann@example.com", code: code, password: "abc"))
            try expectProblem(weak, .badRequest, .weakPassword)
            let noAddress = try await app.v1.post(V1.Accounts.recover.path, json: #"{"code":"\#(code)","password":"brand-new-1!"}"#)
            try expectProblem(noAddress, .badRequest, .missingParameter)
            let unknown = try await app.v1.post(V1.Accounts.recover.path, RecoveryRequest(email: "nobody@example.com", code: code, password: "brand-new-1!"))
            try expectProblem(unknown, .badRequest, nil)

            // nothing changed
            #expect(try await app.v1.get(V1.Accounts.me.path, token: session.token).status == .ok)
            _ = try await app.v1.login("ann@example.com", "secret-91!")
        }
    }

    // MARK: Email change

    @Test("an email change stays pending until its code; the old address keeps working and is told", arguments: TestEngine.once)
    func emailChange_isPendingUntilConfirmed_oldAddressKeepsWorking(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let session = try await app.v1.signedUp(email: "ann@example.com")

            // MUT
            let response = try await app.v1.post(V1.Accounts.requestEmailChange.path, json: #"{"email":"New@Example.com","currentPassword":"secret-91!"}"#, token: session.token)

            // validate: pending, shown, code to the new address
            #expect(response.status == .accepted, "\(response.text)")
            let sent = try response.decoded(as: CodeSent.self)
            #expect(sent.channel == .email && sent.destination == "new@example.com")
            #expect(sent.expiresAt == app.clock.now.addingTimeInterval(600))
            var account = try await app.v1.me(session.token)
            #expect(account.email == "ann@example.com")
            #expect(account.pendingEmail == "new@example.com")
            let code = try await app.v1.code(sentTo: "new@example.com")

            // the old address is told, and still logs in and recovers
            let notice = try #require(try await app.v1.messages(to: "ann@example.com").first)
            #expect(notice.code == nil, "a notice, not a code: \(notice.body)")
            #expect(notice.body.contains("new@example.com"))
            _ = try await app.v1.login("ann@example.com", "secret-91!")
            try expectProblem(try await app.v1.post(V1.Sessions.login.path, LoginRequest(identifier: "new@example.com", password: "secret-91!")), .badRequest, .invalidCredentials)
            let mailsToNew = try await app.v1.messages(to: "new@example.com").count
            #expect(try await app.v1.post(V1.Accounts.recoveryCode.path, CodeRequest(email: "new@example.com")).status == .accepted)
            #expect(try await app.v1.messages(to: "new@example.com").count == mailsToNew, "an unconfirmed address gets no recovery code")

            // a wrong code counts
            let wrong = try await app.v1.post(V1.Accounts.verifyEmailChange.path, CodeVerification(code: code == "000000" ? "111111" : "000000"), token: session.token)
            #expect(try expectProblem(wrong, .badRequest, .invalidCode).attemptsLeft == sent.attemptsAllowed - 1)

            // MUT: the code switches over
            let verified = try await app.v1.post(V1.Accounts.verifyEmailChange.path, CodeVerification(code: code), token: session.token)

            // validate
            #expect(verified.status == .ok, "\(verified.text)")
            account = try verified.decoded(as: Account.self)
            #expect(account.email == "new@example.com")
            #expect(account.pendingEmail == nil)
            #expect(account.emailConfirmed)
            #expect(try await app.v1.me(session.token) == account)
            _ = try await app.v1.login("new@example.com", "secret-91!")
            try expectProblem(try await app.v1.post(V1.Sessions.login.path, LoginRequest(identifier: "ann@example.com", password: "secret-91!")), .badRequest, .invalidCredentials)
        }
    }

    @Test("the old address recovers the password while a change is pending", arguments: TestEngine.once)
    func emailChange_pending_oldAddressStillRecovers(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let session = try await app.v1.signedUp(email: "ann@example.com")
            #expect(try await app.v1.post(V1.Accounts.requestEmailChange.path, EmailChangeRequest(email: "new@example.com", currentPassword: "secret-91!"), token: session.token).status == .accepted)
            app.clock.advance(by: 61)
            let before = try await app.v1.messages(to: "ann@example.com").count

            // MUT
            let response = try await app.v1.post(V1.Accounts.recoveryCode.path, CodeRequest(email: "ann@example.com"))

            // validate
            #expect(response.status == .accepted)
            let mails = try await app.v1.messages(to: "ann@example.com")
            #expect(mails.count == before + 1)
            let code = try #require(mails.first?.code)
            #expect(try await app.v1.post(V1.Accounts.recover.path, RecoveryRequest(email: "ann@example.com", code: code, password: "brand-new-1!")).status == .noContent)
            _ = try await app.v1.login("ann@example.com", "brand-new-1!")
        }
    }

    @Test("DELETE /v1/me/email cancels the pending change; its code then finds no_pending_email", arguments: TestEngine.once)
    func emailChange_cancel_clearsThePendingAddress(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let session = try await app.v1.signedUp(email: "ann@example.com")
            #expect(try await app.v1.post(V1.Accounts.requestEmailChange.path, EmailChangeRequest(email: "new@example.com", currentPassword: "secret-91!"), token: session.token).status == .accepted)
            let code = try await app.v1.code(sentTo: "new@example.com")

            // MUT
            let response = try await app.v1.delete(V1.Accounts.requestEmailChange.path, token: session.token)

            // validate
            #expect(response.status == .ok, "\(response.text)")
            let account = try response.decoded(as: Account.self)
            #expect(account.email == "ann@example.com" && account.pendingEmail == nil && account.emailConfirmed)
            try expectProblem(try await app.v1.post(V1.Accounts.verifyEmailChange.path, CodeVerification(code: code), token: session.token), .badRequest, .noPendingEmail)
            try expectProblem(try await app.v1.delete(V1.Accounts.requestEmailChange.path, token: session.token), .badRequest, .noPendingEmail)
            #expect(try await app.v1.me(session.token).email == "ann@example.com")
            try expectProblem(try await app.v1.post(V1.Sessions.login.path, LoginRequest(identifier: "new@example.com", password: "secret-91!")), .badRequest, .invalidCredentials)
        }
    }

    @Test("an email change to another account's address is 409; to my own is email_unchanged; nonsense is invalid_email", arguments: TestEngine.once)
    func emailChange_toTakenOrSameAddress_isRefused(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            _ = try await app.v1.signedUp(email: "ann@example.com")
            let bob = try await app.v1.signedUp(email: "bob@example.com")
            let annMails = try await app.v1.messages(to: "ann@example.com").count

            // MUT
            let taken = try await app.v1.post(V1.Accounts.requestEmailChange.path, json: #"{"email":"ANN@example.com","currentPassword":"secret-91!"}"#, token: bob.token)
            let same = try await app.v1.post(V1.Accounts.requestEmailChange.path, json: #"{"email":"Bob@Example.com","currentPassword":"secret-91!"}"#, token: bob.token)
            let invalid = try await app.v1.post(V1.Accounts.requestEmailChange.path, json: #"{"email":"not-an-email","currentPassword":"secret-91!"}"#, token: bob.token)

            // validate
            try expectProblem(taken, .conflict, .emailTaken)
            try expectProblem(same, .badRequest, .emailUnchanged)
            #expect(try expectProblem(invalid, .badRequest, .invalidEmail).field == "email")
            #expect(try await app.v1.messages(to: "ann@example.com").count == annMails)
            #expect(try await app.v1.me(bob.token).pendingEmail == nil)
        }
    }

    @Test("confirming a change to an address another account took meanwhile is 409 email_taken", arguments: TestEngine.once)
    func emailVerify_whenAddressWasTakenMeanwhile_is409(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let bob = try await app.v1.signedUp(email: "bob@example.com")
            #expect(try await app.v1.post(V1.Accounts.requestEmailChange.path, EmailChangeRequest(email: "carol@example.com", currentPassword: "secret-91!"), token: bob.token).status == .accepted)
            let code = try await app.v1.code(sentTo: "carol@example.com")
            app.clock.advance(by: 61)
            _ = try await app.v1.signedUp(email: "carol@example.com")

            // MUT
            let response = try await app.v1.post(V1.Accounts.verifyEmailChange.path, CodeVerification(code: code), token: bob.token)

            // validate
            try expectProblem(response, .conflict, .emailTaken)
            #expect(try await app.v1.me(bob.token).email == "bob@example.com")
        }
    }

    // MARK: Phone

    @Test("phone verification: an SMS code, then verify attaches the phone as verified", arguments: TestEngine.once)
    func phoneVerification_withCode_attachesVerifiedPhone(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let session = try await app.v1.signedUp(email: "ann@example.com")

            // MUT
            let response = try await app.v1.post(V1.Accounts.requestPhoneVerification.path, json: #"{"phone":"+7 912 345-67-89","currentPassword":"secret-91!"}"#, token: session.token)

            // validate: the code goes by SMS
            #expect(response.status == .accepted, "\(response.text)")
            let sent = try response.decoded(as: CodeSent.self)
            #expect(sent.channel == .sms && sent.destination == "+79123456789")
            let sms = try #require(try await app.v1.messages(to: "+79123456789").first)
            #expect(sms.channel == "sms")
            let code = try #require(sms.code)
            #expect(try await app.v1.me(session.token).phone == nil)

            // the phone is required, a wrong code counts
            try expectProblem(try await app.v1.post(V1.Accounts.verifyPhone.path, json: #"{"code":"\#(code)"}"#, token: session.token), .badRequest, .missingParameter)
            let wrong = try await app.v1.post(V1.Accounts.verifyPhone.path, CodeVerification(code: code == "000000" ? "111111" : "000000", phone: "+79123456789"), token: session.token)
            #expect(try expectProblem(wrong, .badRequest, .invalidCode).attemptsLeft == sent.attemptsAllowed - 1)

            // MUT: the right code, the phone typed differently
            let verified = try await app.v1.post(V1.Accounts.verifyPhone.path, CodeVerification(code: code, phone: "8 912 345 67 89"), token: session.token)

            // validate
            #expect(verified.status == .ok, "\(verified.text)")
            let account = try verified.decoded(as: Account.self)
            #expect(account.phone == "+79123456789" && account.phoneVerified)
            #expect(account.email == "ann@example.com" && account.emailConfirmed)
            #expect(try await app.v1.me(session.token) == account)
            _ = try await app.v1.login("+79123456789", "secret-91!")
            app.clock.advance(by: 61)
            try expectProblem(try await app.v1.post(V1.Accounts.requestPhoneVerification.path, PhoneVerificationRequest(phone: "+79123456789", currentPassword: "secret-91!"), token: session.token), .badRequest, .phoneAlreadyVerified)
        }
    }

    @Test("a phone another account has is 409 phone_taken; a malformed one invalid_phone", arguments: TestEngine.once)
    func phoneVerification_phoneOfAnotherAccount_is409(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            _ = try await app.v1.signedUp(phone: "+79123456789")
            let ann = try await app.v1.signedUp(email: "ann@example.com")
            let texts = try await app.v1.messages(to: "+79123456789").count
            app.clock.advance(by: 61)

            // MUT
            let taken = try await app.v1.post(V1.Accounts.requestPhoneVerification.path, PhoneVerificationRequest(phone: "8 912 345-67-89", currentPassword: "secret-91!"), token: ann.token)
            let invalid = try await app.v1.post(V1.Accounts.requestPhoneVerification.path, PhoneVerificationRequest(phone: "12345", currentPassword: "secret-91!"), token: ann.token)

            // validate
            try expectProblem(taken, .conflict, .phoneTaken)
            #expect(try expectProblem(invalid, .badRequest, .invalidPhone).field == "phone")
            #expect(try await app.v1.messages(to: "+79123456789").count == texts)
            #expect(try await app.v1.me(ann.token).phone == nil)
        }
    }

    // MARK: Avatar

    @Test("PUT a PNG: 200 with avatarUrl, which serves the same bytes as image/png; a new upload, a new URL", arguments: TestEngine.once)
    func avatar_putPNG_servesTheSameBytes(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let session = try await app.v1.signedUp(email: "ann@example.com")
            let png = TestImage.png(width: 1, height: 1, rgba: (255, 0, 0, 255))

            // MUT
            let response = try await app.v1.put(V1.Accounts.uploadAvatar.path, body: png, contentType: "image/png", token: session.token)

            // validate
            #expect(response.status == .ok, "\(response.text)")
            let account = try response.decoded(as: Account.self)
            let url = try #require(account.avatarUrl)
            #expect(url.hasPrefix("\(app.configuration.publicURL)/v1/avatars/"), "\(url)")
            #expect(try await app.v1.me(session.token).avatarUrl == url)
            let image = try await app.v1.get(try TestImage.path(of: url))   // public: no token
            #expect(image.status == .ok)
            #expect(image.mediaType == "image/png")
            #expect(Array(image.body.readableBytesView) == png)

            // a second upload: another URL, the new bytes
            let blue = TestImage.png(width: 2, height: 2, rgba: (0, 0, 255, 255))
            let second = try await app.v1.put(V1.Accounts.uploadAvatar.path, body: blue, contentType: "image/png", token: session.token)
            #expect(second.status == .ok, "\(second.text)")
            let secondURL = try #require(try second.decoded(as: Account.self).avatarUrl)
            #expect(secondURL != url)
            let secondImage = try await app.v1.get(try TestImage.path(of: secondURL))
            #expect(Array(secondImage.body.readableBytesView) == blue)
        }
    }

    @Test("bytes that are not the announced image format are 400 invalid_image", arguments: TestEngine.once)
    func avatar_bytesNotMatchingType_isInvalidImage(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let session = try await app.v1.signedUp(email: "ann@example.com")
            let jpegHeader: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 0x4A, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00]
            let cases: [(String, [UInt8], String)] = [
                ("text as png", Array("definitely not an image".utf8), "image/png"),
                ("jpeg as png", jpegHeader, "image/png"),
                ("png as jpeg", TestImage.png(width: 1, height: 1), "image/jpeg"),
                ("png as gif", TestImage.png(width: 1, height: 1), "image/gif"),
                ("empty png", [], "image/png"),
            ]

            for (label, bytes, type) in cases {
                // MUT
                let response = try await app.v1.put(V1.Accounts.uploadAvatar.path, body: bytes, contentType: type, token: session.token)

                // validate
                let problem = try expectProblem(response, .badRequest, .invalidImage)
                #expect(problem.code == .invalidImage, "\(label)")
            }
            #expect(try await app.v1.me(session.token).avatarUrl == nil)
        }
    }

    @Test("an avatar of another media type is 415 unsupported_media_type", arguments: TestEngine.once)
    func avatar_otherMediaType_is415(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let session = try await app.v1.signedUp(email: "ann@example.com")
            let png = TestImage.png(width: 1, height: 1)

            for type in ["text/plain", "application/json", "image/svg+xml", "application/octet-stream"] {
                // MUT
                let response = try await app.v1.put(V1.Accounts.uploadAvatar.path, body: png, contentType: type, token: session.token)

                // validate
                try expectProblem(response, .unsupportedMediaType, .unsupportedMediaType)
            }
            #expect(try await app.v1.me(session.token).avatarUrl == nil)
        }
    }

    @Test("an avatar over the configured size is 413 body_too_large; the avatar limit, not the JSON one, applies", arguments: TestEngine.once)
    func avatar_overConfiguredLimit_is413(engine: TestEngine) async throws {
        try await withApp(engine, configure: { $0.limits.avatarMaxBytes = 8_192; $0.limits.maxBodyBytes = 2_048 }) { app in
            // setup
            let session = try await app.v1.signedUp(email: "ann@example.com")
            let big = TestImage.png(width: 64, height: 64)       // ~16 KiB
            let medium = TestImage.png(width: 24, height: 24)    // ~2.4 KiB: over the JSON limit, under the avatar one
            #expect(big.count > 8_192 && medium.count > 2_048 && medium.count < 8_192)

            // MUT
            let response = try await app.v1.put(V1.Accounts.uploadAvatar.path, body: big, contentType: "image/png", token: session.token)

            // validate
            try expectProblem(response, .contentTooLarge, .bodyTooLarge)
            #expect(try await app.v1.me(session.token).avatarUrl == nil)
            let fits = try await app.v1.put(V1.Accounts.uploadAvatar.path, body: medium, contentType: "image/png", token: session.token)
            #expect(fits.status == .ok, "\(fits.text)")
        }
    }

    @Test("DELETE /v1/me/avatar clears avatarUrl", arguments: TestEngine.once)
    func avatar_delete_clearsAvatarUrl(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup
            let session = try await app.v1.signedUp(email: "ann@example.com")
            let put = try await app.v1.put(V1.Accounts.uploadAvatar.path, body: TestImage.png(width: 1, height: 1), contentType: "image/png", token: session.token)
            #expect(try put.decoded(as: Account.self).avatarUrl != nil)

            // MUT
            let response = try await app.v1.delete(V1.Accounts.uploadAvatar.path, token: session.token)

            // validate
            #expect(response.status == .ok, "\(response.text)")
            #expect(try response.decoded(as: Account.self).avatarUrl == nil)
            #expect(try await app.v1.me(session.token).avatarUrl == nil)
        }
    }

    @Test("an unknown avatar id is 404 not_found", arguments: TestEngine.once)
    func avatarImage_unknownId_is404(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // MUT
            let response = try await app.v1.get(V1Client.path(V1.Accounts.avatarImage.path, ["id": UUID().uuidString]))

            // validate
            try expectProblem(response, .notFound, .notFound)
        }
    }
}

/// Real images built byte by byte: a PNG is the 8-byte signature, then IHDR, IDAT (zlib with
/// stored deflate blocks, so no compressor is needed) and IEND, each chunk with its CRC-32.
enum TestImage {
    static func png(width: Int, height: Int, rgba: (UInt8, UInt8, UInt8, UInt8) = (200, 30, 30, 255)) -> [UInt8] {
        var ihdr: [UInt8] = []
        ihdr += bigEndian(UInt32(width))
        ihdr += bigEndian(UInt32(height))
        ihdr += [8, 6, 0, 0, 0]   // 8 bits per sample, RGBA, deflate, no filter method, no interlace
        var raw: [UInt8] = []
        for _ in 0..<height {
            raw.append(0)   // filter: none
            for _ in 0..<width { raw += [rgba.0, rgba.1, rgba.2, rgba.3] }
        }
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        png += chunk("IHDR", ihdr)
        png += chunk("IDAT", zlibStored(raw))
        png += chunk("IEND", [])
        return png
    }

    /// The path (and query) of an absolute avatar URL, to request it from the test server.
    static func path(of url: String) throws -> String {
        let components = try #require(URLComponents(string: url))
        return components.percentEncodedPath + (components.percentEncodedQuery.map { "?\($0)" } ?? "")
    }

    private static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typeBytes = Array(type.utf8)
        return bigEndian(UInt32(data.count)) + typeBytes + data + bigEndian(crc32(typeBytes + data))
    }

    private static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let length = min(65_535, data.count - offset)
            let final: UInt8 = offset + length == data.count ? 1 : 0
            out.append(final)
            out += [UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8((~length >> 8) & 0xFF)]
            out += data[offset..<offset + length]
            offset += length
        } while offset < data.count
        return out + bigEndian(adler32(data))
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }

    private static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = (crc & 1) != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    private static func adler32(_ bytes: [UInt8]) -> UInt32 {
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in bytes {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        return (b << 16) | a
    }
}
