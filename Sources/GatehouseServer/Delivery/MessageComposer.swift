import Foundation
import GatehouseAPI

/// Builds the localized texts of every message Gatehouse sends.
struct MessageComposer: Sendable {
    let publicURL: String

    func signupCodeSMS(to phone: String, code: String, language: AppLanguage) -> OutgoingMessage {
        // "Your … code is 123456": the wording iOS recognises for one-time-code autofill.
        OutgoingMessage(kind: .sms, destination: phone, subject: nil, body: LocalizedText("sms.signupCode", [code]).render(language), code: code)
    }

    func confirmationMail(to email: String, token: String, linkTTL: TimeInterval, language: AppLanguage) -> OutgoingMessage {
        let link = "\(publicURL)\(PhoneAccountsAPI.Path.confirm)?id=\(token)"
        let hours = String(max(1, Int((linkTTL / 3600).rounded())))
        return OutgoingMessage(
            kind: .email, destination: email,
            subject: LocalizedText("mail.confirm.subject").render(language),
            body: LocalizedText("mail.confirm.body", [email, link, hours]).render(language),
            code: token
        )
    }

    func temporaryPassword(kind: OutgoingMessage.Kind, to destination: String, password: String, ttl: TimeInterval, language: AppLanguage) -> OutgoingMessage {
        let minutes = String(max(1, Int((ttl / 60).rounded())))
        switch kind {
        case .sms:
            return OutgoingMessage(kind: .sms, destination: destination, subject: nil,
                                   body: LocalizedText("sms.temporaryPassword", [password, minutes]).render(language), code: password)
        case .email:
            return OutgoingMessage(kind: .email, destination: destination,
                                   subject: LocalizedText("mail.temporaryPassword.subject").render(language),
                                   body: LocalizedText("mail.temporaryPassword.body", [password, minutes]).render(language), code: password)
        }
    }

    func emailChangeNotice(to oldEmail: String, newEmail: String, language: AppLanguage) -> OutgoingMessage {
        OutgoingMessage(kind: .email, destination: oldEmail,
                        subject: LocalizedText("mail.emailChanged.subject").render(language),
                        body: LocalizedText("mail.emailChanged.body", [newEmail, oldEmail]).render(language), code: nil)
    }
}

