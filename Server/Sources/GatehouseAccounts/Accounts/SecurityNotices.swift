import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform

/// What an account's owner is told when how it signs in changes, and where.
package struct SecurityNotices: Sendable {
    package let composer: MessageComposer

    package init(composer: MessageComposer) {
        self.composer = composer
    }

    /// A change to how the account signs in, told to its owner: by email to a confirmed address,
    /// else by SMS to a verified phone, else to nobody.
    package func securityNotice(_ kind: MessageComposer.SecondFactorNotice, _ arguments: [String] = [], to account: AccountModel) -> OutgoingMessage? {
        if let email = account.email, account.emailConfirmedAt != nil {
            return composer.secondFactorNotice(kind, arguments, to: email, channel: .email, language: account.language)
        }
        if let phone = account.phone, account.phoneVerifiedAt != nil {
            return composer.secondFactorNotice(kind, arguments, to: phone, channel: .sms, language: account.language)
        }
        return nil
    }

    /// A recovery by email proves the email, not the phone: a phone verified before the email
    /// was confirmed may be somebody else's (the one who created the account with a stranger's
    /// address), so it stops being a way in until the account verifies it again. The account's
    /// model is changed here; the returned notice to the phone is for the caller's transaction.
    package func unverifyPhoneAfterEmailRecovery(_ account: AccountModel) -> OutgoingMessage? {
        guard let phone = account.phone, let verifiedAt = account.phoneVerifiedAt,
              let confirmedAt = account.emailConfirmedAt, verifiedAt <= confirmedAt else { return nil }
        account.phoneVerifiedAt = nil
        return composer.phoneUnverified(to: phone, language: account.language)
    }
}
