/// A stable, machine-readable error code shared by the server, the SDK and the tests.
///
/// Every surface carries it in its own form (the `X-Error-Code` header on `/api`, the
/// `code` member of a problem document on `/v1`, `error_code` on the WebSocket gateway).
/// Unknown codes still decode, so an older client keeps working against a newer server.
public struct GatehouseErrorCode: RawRepresentable, Hashable, Codable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }
    public var description: String { rawValue }
}

extension GatehouseErrorCode {
    // Input
    public static let missingParameter: Self = "missing_parameter"
    public static let invalidParameter: Self = "invalid_parameter"
    public static let invalidPhone: Self = "invalid_phone"
    public static let invalidEmail: Self = "invalid_email"
    public static let invalidDate: Self = "invalid_date"
    public static let invalidLogin: Self = "invalid_login"
    public static let weakPassword: Self = "weak_password"
    public static let fieldTooLong: Self = "field_too_long"
    public static let bodyTooLarge: Self = "body_too_large"
    public static let malformedBody: Self = "malformed_body"
    public static let unsupportedMediaType: Self = "unsupported_media_type"
    public static let invalidTag: Self = "invalid_tag"
    public static let invalidLocale: Self = "invalid_locale"
    public static let invalidImage: Self = "invalid_image"
    // Accounts
    public static let phoneTaken: Self = "phone_taken"
    public static let emailTaken: Self = "email_taken"
    public static let loginTaken: Self = "login_taken"
    public static let invalidCredentials: Self = "invalid_credentials"
    /// A refresh token that is unknown, used, expired, or whose session ended: sign in again.
    public static let refreshTokenInvalid: Self = "refresh_token_invalid"
    public static let accountNotFound: Self = "account_not_found"
    public static let noEmail: Self = "no_email"
    public static let emailAlreadyConfirmed: Self = "email_already_confirmed"
    public static let emailNotConfirmed: Self = "email_not_confirmed"
    public static let noPhone: Self = "no_phone"
    public static let phoneChangeNotAllowed: Self = "phone_change_not_allowed"
    public static let tagTaken: Self = "tag_taken"
    public static let emailUnchanged: Self = "email_unchanged"
    public static let phoneAlreadyVerified: Self = "phone_already_verified"
    public static let noPendingEmail: Self = "no_pending_email"
    /// An operator locked the account: no sign-in works until they unlock it.
    public static let accountLocked: Self = "account_locked"
    /// The password was right, and the account has a second factor: on `/v1` the problem carries
    /// the challenge `POST /v1/sessions/second-factor` finishes; surfaces without a second step
    /// (`/api`, the WebSocket gateway, Sign To Login) cannot sign this account in: use `/v1`.
    public static let secondFactorRequired: Self = "second_factor_required"
    /// The login challenge is unknown, used, expired or out of attempts: log in with the password again.
    public static let loginChallengeInvalid: Self = "login_challenge_invalid"
    /// The authenticator app is on already: turn it off first to enrol another.
    public static let totpAlreadyEnabled: Self = "totp_already_enabled"
    /// No authenticator app is on (or waiting for its first code).
    public static let totpNotEnabled: Self = "totp_not_enabled"
    /// A passkey's registration or assertion did not verify (its challenge, origin, relying party,
    /// user verification, signature or sign counter): the detail says which.
    public static let passkeyInvalid: Self = "passkey_invalid"
    public static let passkeyNotFound: Self = "passkey_not_found"
    /// An account has as many passkeys as it may.
    public static let tooManyPasskeys: Self = "too_many_passkeys"
    // Sign in with Apple and Google
    /// The provider's identity token did not verify (its signature, issuer, audience, times, nonce) or was used
    /// before: the detail says which. Get a new one from the provider's sheet.
    public static let identityTokenInvalid: Self = "identity_token_invalid"
    /// This server does not take that provider (its operator did not configure it).
    public static let identityProviderOff: Self = "identity_provider_off"
    /// The provider's verified email is an account's confirmed address: the problem's `identityLink` offers to join
    /// the identity to that account with its password (`POST /v1/sessions/link`).
    public static let identityLinkRequired: Self = "identity_link_required"
    /// The link token is unknown, used or expired: sign in with the provider again.
    public static let identityLinkInvalid: Self = "identity_link_invalid"
    /// The provider's identity is linked to another account already.
    public static let identityTaken: Self = "identity_taken"
    public static let identityNotFound: Self = "identity_not_found"
    /// Removing it would leave the account no way in (no password, passkey, other identity, or confirmed address).
    public static let lastWayIn: Self = "last_way_in"
    // Push
    public static let deviceNotFound: Self = "device_not_found"
    /// An account has as many push devices as it may.
    public static let tooManyDevices: Self = "too_many_devices"
    // The admin API
    /// The admin key is valid but lacks the scope the operation needs.
    public static let insufficientScope: Self = "insufficient_scope"
    public static let clientNotFound: Self = "client_not_found"
    /// The admin API: no such webhook endpoint, or no such webhook delivery given up on.
    public static let webhookNotFound: Self = "webhook_not_found"
    public static let deliveryNotFound: Self = "delivery_not_found"
    /// A change that opens a new way into the account (email, phone, password) needs the current password.
    public static let currentPasswordRequired: Self = "current_password_required"
    /// A phone number in a country this server does not send SMS to.
    public static let phoneCountryNotAllowed: Self = "phone_country_not_allowed"
    // Codes
    public static let invalidCode: Self = "invalid_code"
    public static let codeExpired: Self = "code_expired"
    public static let codeAttemptsExhausted: Self = "code_attempts_exhausted"
    // Limits
    public static let rateLimited: Self = "rate_limited"
    public static let resendTooSoon: Self = "resend_too_soon"
    // Sessions
    public static let unauthorized: Self = "unauthorized"
    public static let sessionNotFound: Self = "session_not_found"
    // Messenger
    public static let personNotFound: Self = "person_not_found"
    public static let requestNotFound: Self = "request_not_found"
    public static let chatNotFound: Self = "chat_not_found"
    public static let messageNotFound: Self = "message_not_found"
    public static let attachmentNotFound: Self = "attachment_not_found"
    /// Only an account with a tag is a person: the messenger needs one.
    public static let tagRequired: Self = "tag_required"
    /// The person takes messages from friends only.
    public static let messagingNotAllowed: Self = "messaging_not_allowed"
    public static let notYourself: Self = "not_yourself"
    public static let notFriends: Self = "not_friends"
    public static let emptyMessage: Self = "empty_message"
    public static let invalidText: Self = "invalid_text"
    public static let tooManyAttachments: Self = "too_many_attachments"
    public static let notMessageAuthor: Self = "not_message_author"
    public static let editWindowClosed: Self = "edit_window_closed"
    public static let messageDeleted: Self = "message_deleted"
    /// A `clientMessageId` already used for a message in another chat.
    public static let clientMessageIdReused: Self = "client_message_id_reused"
    public static let rangeNotSatisfiable: Self = "range_not_satisfiable"
    public static let tooManyBlocks: Self = "too_many_blocks"
    public static let appNotFound: Self = "app_not_found"
    /// No Sign To Login profile (no enrolment, or it was deleted).
    public static let signatureProfileNotFound: Self = "signature_profile_not_found"
    public static let invalidBundleId: Self = "invalid_bundle_id"
    public static let invalidURL: Self = "invalid_url"
    public static let tooManyApps: Self = "too_many_apps"
    /// An account that owns an enabled app cannot be deleted: disable its apps first.
    public static let appsEnabled: Self = "apps_enabled"
    // Delivery
    // Wallet
    public static let walletNotFound: Self = "wallet_not_found"
    /// An account whose wallet holds money cannot be deleted: pay it out first.
    public static let walletNotEmpty: Self = "wallet_not_empty"
    /// A wallet is attached to a verified phone: verify one first.
    public static let phoneNotVerified: Self = "phone_not_verified"
    public static let recipientNotFound: Self = "recipient_not_found"
    public static let transferNotFound: Self = "transfer_not_found"
    public static let moneyRequestNotFound: Self = "money_request_not_found"
    public static let insufficientFunds: Self = "insufficient_funds"
    public static let invalidAmount: Self = "invalid_amount"
    /// Over the configured largest single transfer.
    public static let transferLimitExceeded: Self = "transfer_limit_exceeded"
    /// Over the configured sum a wallet may pay out in one day (UTC).
    public static let dailyLimitExceeded: Self = "daily_limit_exceeded"
    /// A money-moving `POST` without an `Idempotency-Key` header.
    public static let idempotencyKeyRequired: Self = "idempotency_key_required"
    /// The key was used before with another request.
    public static let idempotencyKeyReused: Self = "idempotency_key_reused"
    /// The request is not in a state that allows this (the problem's detail says which).
    public static let invalidRequestState: Self = "invalid_request_state"
    /// A wallet message is a record of a payment: it cannot be edited, deleted for everyone or forwarded.
    public static let paymentMessage: Self = "payment_message"
    /// This server takes no top-ups: no payment provider is configured.
    public static let topUpsUnavailable: Self = "topups_unavailable"
    public static let topUpNotFound: Self = "topup_not_found"
    /// The payment provider could not be reached or refused the call: try again with the same key.
    public static let paymentProviderUnavailable: Self = "payment_provider_unavailable"
    /// A payment provider's notification that is not believed or does not match (its detail says why).
    public static let notificationRefused: Self = "notification_refused"
    public static let deliveryFailed: Self = "delivery_failed"
    // Server
    public static let internalError: Self = "internal_error"
    public static let notFound: Self = "not_found"
    public static let methodNotAllowed: Self = "method_not_allowed"
}
