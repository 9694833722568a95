import Foundation
import GatehouseAPI

/// Builds the localized texts of every message Gatehouse sends.
package struct MessageComposer: Sendable {
    package let publicURL: String

    package func confirmationMail(to email: String, token: String, linkTTL: TimeInterval, language: AppLanguage) -> OutgoingMessage {
        let link = "\(publicURL)\(PhoneAccountsAPI.Path.confirm)?id=\(token)"
        let hours = String(max(1, Int((linkTTL / 3600).rounded())))
        return OutgoingMessage(
            kind: .email, destination: email,
            subject: LocalizedText("mail.confirm.subject").render(language),
            body: LocalizedText("mail.confirm.body", [email, link, hours]).render(language),
            code: token
        )
    }

    package func temporaryPassword(kind: OutgoingMessage.Kind, to destination: String, password: String, ttl: TimeInterval, language: AppLanguage) -> OutgoingMessage {
        let minutes = String(max(1, Int((ttl / 60).rounded())))
        switch kind {
        case .sms:
            return OutgoingMessage(kind: .sms, destination: destination, subject: nil,
                                   body: LocalizedText("sms.temporaryPassword", [password, minutes]).render(language), code: password)
        case .email, .push, .webhook, .revocation:
            // A temporary password goes by SMS or by mail, never in a push or a webhook.
            return OutgoingMessage(kind: .email, destination: destination,
                                   subject: LocalizedText("mail.temporaryPassword.subject").render(language),
                                   body: LocalizedText("mail.temporaryPassword.body", [password, minutes]).render(language), code: password)
        }
    }

    package func emailChangeNotice(to oldEmail: String, newEmail: String, language: AppLanguage) -> OutgoingMessage {
        OutgoingMessage(kind: .email, destination: oldEmail,
                        subject: LocalizedText("mail.emailChanged.subject").render(language),
                        body: LocalizedText("mail.emailChanged.body", [newEmail, oldEmail]).render(language), code: nil)
    }

    package init(publicURL: String) {
        self.publicURL = publicURL
    }
}


extension MessageComposer {
    /// A one-time code for one of `/v1`'s flows, by SMS or mail as the destination is.
    package enum CodeMessage { case signup, recovery, emailChange, signIn, invitation }

    package func code(_ purpose: CodeMessage, to destination: String, channel: OutgoingMessage.Kind, code: String, ttl: TimeInterval, language: AppLanguage) -> OutgoingMessage {
        let minutes = String(max(1, Int((ttl / 60).rounded())))
        if channel == .sms {
            // "Your … code is 123456": the wording iOS recognises for one-time-code autofill.
            return OutgoingMessage(kind: .sms, destination: destination, subject: nil, body: LocalizedText("sms.code", [code]).render(language), code: code)
        }
        let (subject, body): (String, LocalizedText) = switch purpose {
        case .signup: ("mail.signupCode.subject", LocalizedText("mail.signupCode.body", [code, minutes]))
        case .recovery: ("mail.recoveryCode.subject", LocalizedText("mail.recoveryCode.body", [code, minutes]))
        case .emailChange: ("mail.emailChangeCode.subject", LocalizedText("mail.emailChangeCode.body", [destination, code, minutes]))
        case .signIn: ("mail.signInCode.subject", LocalizedText("mail.signInCode.body", [code, minutes]))
        case .invitation: ("mail.invitationCode.subject", LocalizedText("mail.invitationCode.body", [code, minutes]))
        }
        return OutgoingMessage(kind: .email, destination: destination, subject: LocalizedText(subject).render(language), body: body.render(language), code: code)
    }

    /// Sent instead of a sign-up code to an address that already has an account, so the
    /// sign-up form tells a stranger nothing.
    package func accountExists(to destination: String, channel: OutgoingMessage.Kind, language: AppLanguage) -> OutgoingMessage {
        if channel == .sms {
            return OutgoingMessage(kind: .sms, destination: destination, subject: nil, body: LocalizedText("sms.accountExists").render(language), code: nil)
        }
        return OutgoingMessage(kind: .email, destination: destination, subject: LocalizedText("mail.accountExists.subject").render(language),
                               body: LocalizedText("mail.accountExists.body", [destination]).render(language), code: nil)
    }

    package func passwordChanged(to destination: String, channel: OutgoingMessage.Kind, language: AppLanguage) -> OutgoingMessage {
        if channel == .sms {
            return OutgoingMessage(kind: .sms, destination: destination, subject: nil, body: LocalizedText("sms.passwordChanged").render(language), code: nil)
        }
        return OutgoingMessage(kind: .email, destination: destination, subject: LocalizedText("mail.passwordChanged.subject").render(language),
                               body: LocalizedText("mail.passwordChanged.body").render(language), code: nil)
    }

    /// A change to how an account signs in (its second factors), or its deletion cancelled by a login, told to its owner: `sms.secondFactor.<notice>` or
    /// `mail.secondFactor.<notice>.subject`/`.body`, with `arguments`.
    package enum SecondFactorNotice: String, Sendable {
        case totpOn, totpOff, recoveryCodeUsed, recoveryCodesRenewed, passkeyAdded, passkeyRemoved, passkeyCloneSuspected, deletionCancelled,
             identityLinked, identityUnlinked
    }

    package func secondFactorNotice(_ notice: SecondFactorNotice, _ arguments: [String] = [], to destination: String, channel: OutgoingMessage.Kind,
                                    language: AppLanguage) -> OutgoingMessage {
        if channel == .sms {
            return OutgoingMessage(kind: .sms, destination: destination, subject: nil,
                                   body: LocalizedText("sms.secondFactor.\(notice.rawValue)", arguments).render(language), code: nil)
        }
        return OutgoingMessage(kind: .email, destination: destination, subject: LocalizedText("mail.secondFactor.\(notice.rawValue).subject").render(language),
                               body: LocalizedText("mail.secondFactor.\(notice.rawValue).body", arguments).render(language), code: nil)
    }

    /// To an account that held `address` unproven, when its owner proved it elsewhere.
    package func claimLost(to destination: String, channel: OutgoingMessage.Kind, address: String, language: AppLanguage) -> OutgoingMessage {
        if channel == .sms {
            return OutgoingMessage(kind: .sms, destination: destination, subject: nil, body: LocalizedText("sms.claimLost", [address]).render(language), code: nil)
        }
        return OutgoingMessage(kind: .email, destination: destination, subject: LocalizedText("mail.claimLost.subject").render(language),
                               body: LocalizedText("mail.claimLost.body", [address]).render(language), code: nil)
    }

    /// To a phone that stopped being a way in after a recovery by email.
    package func phoneUnverified(to phone: String, language: AppLanguage) -> OutgoingMessage {
        OutgoingMessage(kind: .sms, destination: phone, subject: nil, body: LocalizedText("sms.phoneUnverified").render(language), code: nil)
    }

    /// To the phone an account replaced.
    package func phoneChangeNotice(to oldPhone: String, newPhone: String, language: AppLanguage) -> OutgoingMessage {
        OutgoingMessage(kind: .sms, destination: oldPhone, subject: nil, body: LocalizedText("sms.phoneChanged", [newPhone]).render(language), code: nil)
    }
}
