import Foundation

/// An account's fields as plain values: what answers show, safe to share between requests and
/// to keep in the session cache. It has no password hash, which never needs to leave the row.
struct AccountSnapshot: Sendable {
    var id: UUID
    var phone: String?
    var phoneVerifiedAt: Date?
    var email: String?
    var emailConfirmedAt: Date?
    var pendingEmail: String?
    var username: String?
    var firstName: String?
    var lastName: String?
    var middleName: String?
    var birthday: Date?
    var locale: String?
    var fcmToken: String?
    var avatarID: UUID?
    var createdAt: Date
    var updatedAt: Date

    /// The address the account is shown with: the pending one while a change is unconfirmed.
    var displayedEmail: String? { pendingEmail ?? email }

    /// The spec's `isConfirmed`: the displayed address is confirmed.
    var isEmailConfirmed: Bool { pendingEmail == nil && email != nil && emailConfirmedAt != nil }

    var language: AppLanguage { Self.language(locale: locale) }

    /// The language an account's messages go out in: its locale, Russian when it has none (the specs' language).
    static func language(locale: String?) -> AppLanguage { AppLanguage(localeIdentifier: locale) ?? .ru }
}

extension AccountModel {
    var snapshot: AccountSnapshot {
        AccountSnapshot(
            id: id!, phone: phone, phoneVerifiedAt: phoneVerifiedAt, email: email, emailConfirmedAt: emailConfirmedAt,
            pendingEmail: pendingEmail, username: username, firstName: firstName, lastName: lastName,
            middleName: middleName, birthday: birthday, locale: locale, fcmToken: fcmToken, avatarID: avatarID,
            createdAt: createdAt, updatedAt: updatedAt
        )
    }
}
