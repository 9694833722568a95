import FluentKit
import Foundation
import GatehouseFoundation

/// One account for every spec (docs/architecture.md). Emails and the username key are stored lower-case
/// so uniqueness is case-insensitive on both engines.
package final class AccountModel: Model, @unchecked Sendable {
    package static let schema = "accounts"

    @ID(key: .id) package var id: UUID?
    @OptionalField(key: "phone") package var phone: String?
    @OptionalField(key: "phone_verified_at") package var phoneVerifiedAt: Date?
    @OptionalField(key: "email") package var email: String?
    @OptionalField(key: "email_confirmed_at") package var emailConfirmedAt: Date?
    /// A new address waiting for confirmation; `email` stays in use until then.
    @OptionalField(key: "pending_email") package var pendingEmail: String?
    /// The login or tag as typed.
    @OptionalField(key: "username") package var username: String?
    /// `username` lower-cased: the unique key.
    @OptionalField(key: "username_key") package var usernameKey: String?
    @Field(key: "password_hash") package var passwordHash: String
    @OptionalField(key: "first_name") package var firstName: String?
    @OptionalField(key: "last_name") package var lastName: String?
    @OptionalField(key: "middle_name") package var middleName: String?
    @OptionalField(key: "birthday") package var birthday: Date?
    @OptionalField(key: "locale") package var locale: String?
    @OptionalField(key: "fcm_token") package var fcmToken: String?
    /// The current avatar (`avatars.id`); a new upload gets a new id, so its URL can be cached forever.
    @OptionalField(key: "avatar_id") package var avatarID: UUID?
    /// When the person asked to delete the account: no session works from then, and a password
    /// login before the grace period ends cancels it.
    @OptionalField(key: "deletion_requested_at") package var deletionRequestedAt: Date?
    /// When its personal data was erased; the row stays, anonymous.
    @OptionalField(key: "erased_at") package var erasedAt: Date?
    /// When an operator locked it (no sign-in works, no session lives) and why.
    @OptionalField(key: "locked_at") package var lockedAt: Date?
    @OptionalField(key: "locked_reason") package var lockedReason: String?
    /// Since when logins ask for a second factor (the authenticator app); nil: they do not.
    @OptionalField(key: "second_factor_at") package var secondFactorAt: Date?
    /// The account's id in the system it was imported from (docs/migrating.md).
    @OptionalField(key: "external_id") package var externalID: String?
    @Field(key: "created_at") package var createdAt: Date
    @Field(key: "updated_at") package var updatedAt: Date

    package init() {}

    package init(id: UUID = UUID(), passwordHash: String, now: Date) {
        self.id = id
        self.passwordHash = passwordHash
        self.createdAt = now
        self.updatedAt = now
    }

    /// The address the account is shown with: the pending one while a change is unconfirmed.
    package var displayedEmail: String? { pendingEmail ?? email }

    /// The spec's `isConfirmed`: the displayed address is confirmed.
    package var isEmailConfirmed: Bool { pendingEmail == nil && email != nil && emailConfirmedAt != nil }

    package var language: AppLanguage { AccountSnapshot.language(locale: locale) }
}
