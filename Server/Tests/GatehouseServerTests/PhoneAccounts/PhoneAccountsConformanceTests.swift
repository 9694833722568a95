import Foundation
import GatehouseAPI
import GatehouseServer
import GatehouseTestSupport
import HTTPTypes
import HummingbirdTesting
import Testing

/// The five scenarios of `docs/phone-accounts.md`, walked at the wire level with raw form and
/// multipart requests, on every engine.
@Suite("Phone accounts: the spec's five scenarios")
struct PhoneAccountsConformanceTests {
    typealias P = PhoneAccountsAPI.Path

    @Test("1. Registration: SMS code, register, automatic login, confirmation mail, confirmed", arguments: TestEngine.once)
    func registration_withCode_logsInAndConfirmsEmail(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            // setup: the code goes to the phone in E.164, whatever format was typed
            let sms = try await app.postForm(P.sendSMS, [("phone", "+7 912 345-67-89")])
            #expect(sms.status == .ok)
            let smsMessage = try #require(try await app.outbox(to: "+79123456789").first)
            #expect(smsMessage.channel == "sms")
            let code = try #require(smsMessage.code)
            #expect(code.count == 6 && code.allSatisfy(\.isNumber))
            #expect(smsMessage.body.contains(code))

            // MUT: the web client's FormData (multipart), parameter names in any case
            let register = try await app.postMultipart(P.register, [
                ("phone", "89123456789"), ("code", code), ("password", "Secret-91!"),
                ("Name", "Иван"), ("LastName", "Петров"), ("surname", "Сергеевич"),
                ("email", "Ivan.Petrov@Example.com"), ("birthday", "22.01.2015 15:23:56"),
            ])
            #expect(register.status == .ok, "\(register.text)")
            #expect(register.text == #"{"login":"+79123456789"}"#)

            let token = try await app.login("+7 (912) 345-67-89", "Secret-91!")
            let send = try await app.postForm(P.sendConfirm, [], token: token)
            #expect(send.status == .ok)
            #expect(send.text == #""ok""#)
            var user = try await app.user(token)
            #expect(user.isConfirmed == false)

            let mail = try #require(try await app.outbox(to: "ivan.petrov@example.com").first)
            #expect(mail.channel == "email")
            #expect(mail.body.contains("http://gatehouse.test/api/users/confirm?id="))
            #expect(!mail.body.contains(user.id.uuidString), "the link must not be the account id")
            let page = try await app.confirmEmail("ivan.petrov@example.com")
            #expect(page.status == .ok)
            #expect(page.headers[.contentType] == "text/html; charset=utf-8")
            #expect(page.text.contains("data-state=\"confirmed\""))

            // validate: the account as the spec lists it
            user = try await app.user(token)
            #expect(user.isConfirmed)
            #expect(user.login == "+79123456789")
            #expect(user.phone == "+79123456789")
            #expect(user.email == "ivan.petrov@example.com")
            #expect(user.firstName == "Иван")
            #expect(user.lastName == "Петров")
            #expect(user.surName == "Сергеевич")
            #expect(user.birthday == "22.01.2015 15:23:56")
            #expect(user.room == nil && user.base == nil && user.parts.isEmpty)
            let raw = try await app.get(P.user, token: token).text
            for key in ["id", "login", "name", "firstName", "lastName", "surName", "phone", "email", "birthday", "room", "base", "isConfirmed", "fcm", "parts"] {
                #expect(raw.contains("\"\(key)\":"), "missing key \(key) in \(raw)")
            }
        }
    }

    @Test("2a. Login of a confirmed account shows the final screen's data", arguments: TestEngine.once)
    func login_confirmedAccount_isConfirmed(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            try await app.registerPhoneAccount(email: "anna@example.com")
            let first = try await app.login("+79123456789", "secret-91!")
            try await app.postForm(P.sendConfirm, [], token: first)
            #expect(try await app.confirmEmail("anna@example.com").status == .ok)

            let token = try await app.login("anna@example.com", "secret-91!")   // email works as login too
            let user = try await app.user(token)
            #expect(user.isConfirmed)
            let again = try await app.postForm(P.sendConfirm, [], token: token)
            #expect(again.status == .badRequest)
            #expect(again.errorCode == GatehouseErrorCode.emailAlreadyConfirmed.rawValue)
        }
    }

    @Test("2b. Login of an unconfirmed account: confirmation mail sent again", arguments: TestEngine.once)
    func login_unconfirmedAccount_resendsConfirmation(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            try await app.registerPhoneAccount(email: "boris@example.com")
            let token = try await app.login("+79123456789", "secret-91!")
            #expect(try await app.user(token).isConfirmed == false)
            #expect(try await app.postForm(P.sendConfirm, [], token: token).status == .ok)
            let firstLink = try await app.latestConfirmationToken(to: "boris@example.com")
            app.clock.advance(by: 61)
            // later login: still unconfirmed, the app asks again
            let later = try await app.login("89123456789", "secret-91!")
            let user = try await app.user(later)
            #expect(user.email == "boris@example.com" && !user.isConfirmed)
            #expect(try await app.postForm(P.sendConfirm, [], token: later).status == .ok)
            let mails = try await app.outbox(to: "boris@example.com")
            #expect(mails.count == 2)
            // only the newest link works
            let stale = try await app.get("\(P.confirm)?id=\(firstLink)")
            #expect(stale.status == .badRequest)
            #expect(stale.text.contains("data-state=\"invalid\""))
            #expect(try await app.user(later).isConfirmed == false)
            let page = try await app.confirmEmail("boris@example.com")
            #expect(page.status == .ok)
            #expect(try await app.user(later).isConfirmed)
        }
    }

    @Test("mails speak the account's language (from sign-up), whatever the later request's language", arguments: TestEngine.once)
    func mail_usesTheAccountsLanguage(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            let sms = try await app.postForm(P.sendSMS, [("phone", "+79123456789")], headers: [.acceptLanguage: "en-GB,en;q=0.9"])
            #expect(sms.status == .ok)
            #expect(try await app.outbox(to: "+79123456789").first?.body.hasPrefix("Your Gatehouse code is ") == true)
            let code = try await app.latestCode(to: "+79123456789")
            let register = try await app.postForm(P.register, [("phone", "+79123456789"), ("code", code), ("password", "secret-91!"), ("email", "en@example.com")],
                                                  headers: [.acceptLanguage: "en-GB,en;q=0.9"])
            #expect(register.status == .ok)
            let token = try await app.login("+79123456789", "secret-91!")
            try await app.postForm(P.sendConfirm, [], token: token, headers: [.acceptLanguage: "ru"])
            let mail = try #require(try await app.outbox(to: "en@example.com").first)
            #expect(mail.subject == "Confirm your email address")
            #expect(mail.body.hasPrefix("Hello!"))
        }
    }

    @Test("2c. Login of an account without email: email set with /change, mail sent", arguments: TestEngine.once)
    func login_accountWithoutEmail_setsEmailAndSendsMail(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            try await app.registerPhoneAccount(email: nil)
            let token = try await app.login("+79123456789", "secret-91!")
            var user = try await app.user(token)
            #expect(user.email == nil && !user.isConfirmed)
            let noEmail = try await app.postForm(P.sendConfirm, [], token: token)
            #expect(noEmail.status == .badRequest)
            #expect(noEmail.errorCode == GatehouseErrorCode.noEmail.rawValue)

            let change = try await app.postForm(P.change, [("email", "Clara@Example.com")], token: token)
            #expect(change.status == .ok)
            #expect(try await app.postForm(P.sendConfirm, [], token: token).status == .ok)
            #expect(try await app.confirmEmail("clara@example.com").status == .ok)
            user = try await app.user(token)
            #expect(user.email == "clara@example.com" && user.isConfirmed)
        }
    }

    @Test("3a. Restore by SMS: temporary password, old one works until it is used, other sessions end", arguments: TestEngine.once)
    func restore_bySMS_temporaryPasswordEndsOtherSessions(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            try await app.registerPhoneAccount()
            let oldSession = try await app.login("+79123456789", "secret-91!")
            let restore = try await app.postForm(P.restore, [("phone", "8 912 345 67 89"), ("sms", "true")])
            #expect(restore.status == .ok)
            let sms = try #require(try await app.outbox(to: "+79123456789").first)
            let temporary = try #require(sms.code)
            #expect(sms.body.contains(temporary))

            // The old password still works: asking for a reset locks nobody out.
            _ = try await app.login("+79123456789", "secret-91!")
            // Using the new one replaces the old and ends every other session.
            let fresh = try await app.login("+79123456789", temporary)
            #expect(try await app.get(P.user, token: oldSession).status == .unauthorized)
            #expect(try await app.get(P.user, token: fresh).status == .ok)
            let old = try await app.postForm(P.login, [("login", "+79123456789"), ("password", "secret-91!")])
            #expect(old.status == .badRequest)
            // single use: it is now simply the password
            _ = try await app.login("+79123456789", temporary)
        }
    }

    @Test("3b. Restore by email sends the temporary password to the confirmed address", arguments: TestEngine.once)
    func restore_byEmail_sendsToConfirmedAddress(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            try await app.registerPhoneAccount(email: "dima@example.com")
            let token = try await app.login("+79123456789", "secret-91!")
            // unconfirmed address: it names no account (docs/security.md, "Claims"), so a
            // password never goes to an address nobody proved
            let refused = try await app.postForm(P.restore, [("mail", "dima@example.com")])
            #expect(refused.status == .badRequest)
            #expect(refused.errorCode == GatehouseErrorCode.accountNotFound.rawValue)
            #expect(try await app.outbox(to: "dima@example.com").allSatisfy { $0.code == nil || $0.body.contains("confirm?id=") })
            app.clock.advance(by: 61)

            try await app.postForm(P.sendConfirm, [], token: token)
            #expect(try await app.confirmEmail("dima@example.com").status == .ok)
            let restore = try await app.postForm(P.restore, [("mail", "DIMA@example.com")])
            #expect(restore.status == .ok, "\(restore.text)")
            let mail = try #require(try await app.outbox(to: "dima@example.com").first)
            let temporary = try #require(mail.code)
            #expect(mail.body.contains(temporary))
            _ = try await app.login("dima@example.com", temporary)

            let unknown = try await app.postForm(P.restore, [("login", "nobody@example.com")])
            #expect(unknown.status == .badRequest)
            #expect(unknown.errorCode == GatehouseErrorCode.accountNotFound.rawValue)
            #expect(!unknown.text.isEmpty)
        }
    }

    @Test("4/5. Email change resets isConfirmed; the old address works until the new one is confirmed", arguments: TestEngine.once)
    func change_email_resetsConfirmationUntilConfirmed(engine: TestEngine) async throws {
        try await withApp(engine) { app in
            try await app.registerPhoneAccount(email: "old@example.com")
            let token = try await app.login("+79123456789", "secret-91!")
            try await app.postForm(P.sendConfirm, [], token: token)
            #expect(try await app.confirmEmail("old@example.com").status == .ok)

            // MUT: a confirmed address is a way into the account: changing it takes the password
            let refused = try await app.postForm(P.change, [("email", "new@example.com")], token: token)
            #expect(refused.status == .badRequest)
            #expect(refused.errorCode == GatehouseErrorCode.currentPasswordRequired.rawValue)
            let change = try await app.postForm(P.change, [("email", "new@example.com"), ("current_password", "secret-91!")], token: token)
            #expect(change.status == .ok)

            // validate: reported as unconfirmed, the old address is told, login by it still works
            var user = try await app.user(token)
            #expect(user.email == "new@example.com")
            #expect(user.isConfirmed == false)
            let notice = try #require(try await app.outbox(to: "old@example.com").first)
            #expect(notice.body.contains("new@example.com"))
            _ = try await app.login("old@example.com", "secret-91!")
            #expect(try await app.postForm(P.login, [("login", "new@example.com"), ("password", "secret-91!")]).status == .badRequest)

            #expect(try await app.postForm(P.sendConfirm, [], token: token).status == .ok)
            #expect(try await app.confirmEmail("new@example.com").status == .ok)
            user = try await app.user(token)
            #expect(user.email == "new@example.com" && user.isConfirmed)
            _ = try await app.login("new@example.com", "secret-91!")
            #expect(try await app.postForm(P.login, [("login", "old@example.com"), ("password", "secret-91!")]).status == .badRequest)
        }
    }
}
