import FluentKit
import Foundation

/// A one-time secret sent to a destination: an SMS/email code, a confirmation link token or a
/// temporary password. Only its hash is stored (`Secrets`, or bcrypt for temporary passwords).
package final class VerificationCodeModel: Model, @unchecked Sendable {
    package static let schema = "verification_codes"

    @ID(key: .id) package var id: UUID?
    @Field(key: "purpose") package var purpose: String
    @Field(key: "destination") package var destination: String
    @OptionalField(key: "account_id") package var accountID: UUID?
    @Field(key: "secret_hash") package var secretHash: String
    @Field(key: "attempts") package var attempts: Int
    @Field(key: "max_attempts") package var maxAttempts: Int
    @Field(key: "created_at") package var createdAt: Date
    @Field(key: "expires_at") package var expiresAt: Date
    @OptionalField(key: "consumed_at") package var consumedAt: Date?
    @OptionalField(key: "ip") package var ip: String?

    package init() {}
}

/// What a verification secret is for; stored as its raw value.
package enum VerificationPurpose: String, Sendable, CaseIterable {
    case phoneSignup = "phone_signup"
    case emailConfirmation = "email_confirmation"
    case temporaryPassword = "temporary_password"
    case emailSignup = "email_signup"
    case passwordReset = "password_reset"
    case emailChange = "email_change"
    case phoneVerification = "phone_verification"
    /// Enrolling a signature for an address that already has an account (docs/sign-to-login.md).
    case signatureEnrolment = "signature_enrolment"
    /// Signing in to the Sign To Login profile page by a code mailed to the address.
    case signatureProfile = "signature_profile"
}
