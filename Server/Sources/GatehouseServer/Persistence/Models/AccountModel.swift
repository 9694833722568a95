import FluentKit
import Foundation

/// One account for every spec (docs/architecture.md). Emails and the username key are stored lower-case
/// so uniqueness is case-insensitive on both engines.
final class AccountModel: Model, @unchecked Sendable {
    static let schema = "accounts"

    @ID(key: .id) var id: UUID?
    @OptionalField(key: "phone") var phone: String?
    @OptionalField(key: "phone_verified_at") var phoneVerifiedAt: Date?
    @OptionalField(key: "email") var email: String?
    @OptionalField(key: "email_confirmed_at") var emailConfirmedAt: Date?
    /// A new address waiting for confirmation; `email` stays in use until then.
    @OptionalField(key: "pending_email") var pendingEmail: String?
    /// The login or tag as typed.
    @OptionalField(key: "username") var username: String?
    /// `username` lower-cased: the unique key.
    @OptionalField(key: "username_key") var usernameKey: String?
    @Field(key: "password_hash") var passwordHash: String
    @OptionalField(key: "first_name") var firstName: String?
    @OptionalField(key: "last_name") var lastName: String?
    @OptionalField(key: "middle_name") var middleName: String?
    @OptionalField(key: "birthday") var birthday: Date?
    @OptionalField(key: "locale") var locale: String?
    @OptionalField(key: "fcm_token") var fcmToken: String?
    /// The current avatar (`avatars.id`); a new upload gets a new id, so its URL can be cached forever.
    @OptionalField(key: "avatar_id") var avatarID: UUID?
    @Field(key: "created_at") var createdAt: Date
    @Field(key: "updated_at") var updatedAt: Date

    init() {}

    init(id: UUID = UUID(), passwordHash: String, now: Date) {
        self.id = id
        self.passwordHash = passwordHash
        self.createdAt = now
        self.updatedAt = now
    }

    /// The address the account is shown with: the pending one while a change is unconfirmed.
    var displayedEmail: String? { pendingEmail ?? email }

    /// The spec's `isConfirmed`: the displayed address is confirmed.
    var isEmailConfirmed: Bool { pendingEmail == nil && email != nil && emailConfirmedAt != nil }

    var language: AppLanguage { AccountSnapshot.language(locale: locale) }
}
