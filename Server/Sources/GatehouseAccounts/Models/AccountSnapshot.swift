import Foundation
import GatehouseFoundation

/// An account's fields as plain values: what answers show, safe to share between requests and
/// to keep in the session cache. It has no password hash, which never needs to leave the row.
package struct AccountSnapshot: Sendable {
    package var id: UUID
    package var phone: String?
    package var phoneVerifiedAt: Date?
    package var email: String?
    package var emailConfirmedAt: Date?
    package var pendingEmail: String?
    package var username: String?
    package var firstName: String?
    package var lastName: String?
    package var middleName: String?
    package var birthday: Date?
    package var locale: String?
    package var fcmToken: String?
    package var avatarID: UUID?
    package var createdAt: Date
    package var updatedAt: Date
    /// The business's client record bound to the account, as the session lookup read it with the
    /// account (so the signed-in account's snapshot, `context.sessionAccount`, has it without a
    /// query of its own). A snapshot made from a model (`AccountModel.snapshot`) has none: read
    /// `ClientRecords.record(of:)` there.
    package var clientRecord: ClientRecord? = nil

    /// The address the account is shown with: the pending one while a change is unconfirmed.
    package var displayedEmail: String? { pendingEmail ?? email }

    /// The spec's `isConfirmed`: the displayed address is confirmed.
    package var isEmailConfirmed: Bool { pendingEmail == nil && email != nil && emailConfirmedAt != nil }

    package var language: AppLanguage { Self.language(locale: locale) }

    /// The language an account's messages go out in: its locale, Russian when it has none (the specs' language).
    package static func language(locale: String?) -> AppLanguage { AppLanguage(localeIdentifier: locale) ?? .ru }
}

extension AccountModel {
    package var snapshot: AccountSnapshot {
        AccountSnapshot(
            id: id!, phone: phone, phoneVerifiedAt: phoneVerifiedAt, email: email, emailConfirmedAt: emailConfirmedAt,
            pendingEmail: pendingEmail, username: username, firstName: firstName, lastName: lastName,
            middleName: middleName, birthday: birthday, locale: locale, fcmToken: fcmToken, avatarID: avatarID,
            createdAt: createdAt, updatedAt: updatedAt
        )
    }
}
