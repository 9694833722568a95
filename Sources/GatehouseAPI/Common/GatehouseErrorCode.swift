/// A stable, machine-readable error code shared by the server, the SDK and the tests.
///
/// Every surface carries it in its own form (the `X-Error-Code` header on `/api`, the
/// `code` member of a problem document on `/v1`, `error_code` on the WebSocket gateway).
/// Unknown codes still decode, so an older client keeps working against a newer server.
public struct GatehouseErrorCode: RawRepresentable, Hashable, Codable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The code as it goes on the wire (`invalid_code`).
    public var rawValue: String
    /// The code of this wire value; an unknown one too, so a newer server's codes decode.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The code of this wire value.
    public init(_ rawValue: String) { self.rawValue = rawValue }
    /// The code of this wire value.
    public init(stringLiteral value: String) { self.rawValue = value }
    public var description: String { rawValue }
}

extension GatehouseErrorCode {
    // Input
    /// `missing_parameter`: The parameter "…" is required.
    public static let missingParameter: Self = "missing_parameter"
    /// `invalid_parameter`: a parameter is there but its value is not one the operation takes (`field` names it).
    public static let invalidParameter: Self = "invalid_parameter"
    /// `invalid_phone`: "…" is not a valid phone number.
    public static let invalidPhone: Self = "invalid_phone"
    /// `invalid_email`: "…" is not a valid email address.
    public static let invalidEmail: Self = "invalid_email"
    /// `invalid_date`: "…" is not a valid date; use 22.01.2015 15:23:56 or 2015-01-22T15:23:56.
    public static let invalidDate: Self = "invalid_date"
    /// `invalid_login`: a login that is not a phone number, an email address or a login name the rules allow.
    public static let invalidLogin: Self = "invalid_login"
    /// `weak_password`: the password breaks the server's password policy (the detail says which rule).
    public static let weakPassword: Self = "weak_password"
    /// `field_too_long`: The parameter "…" is too long (at most … characters).
    public static let fieldTooLong: Self = "field_too_long"
    /// `body_too_large`: The request body is too large (at most … bytes).
    public static let bodyTooLarge: Self = "body_too_large"
    /// `malformed_body`: the body is not what the content type says (JSON that does not parse, a broken form).
    public static let malformedBody: Self = "malformed_body"
    /// `unsupported_media_type`: Unsupported Content-Type "…"; send ….
    public static let unsupportedMediaType: Self = "unsupported_media_type"
    /// `invalid_tag`: A tag is 3 to 32 characters: a-z, 0-9, _ and ., with at least one letter.
    public static let invalidTag: Self = "invalid_tag"
    /// `invalid_locale`: "…" is not a supported locale; use en or ru.
    public static let invalidLocale: Self = "invalid_locale"
    /// `invalid_image`: The body is not an image of type ….
    public static let invalidImage: Self = "invalid_image"
    // Accounts
    /// `phone_taken`: An account with this phone number already exists.
    public static let phoneTaken: Self = "phone_taken"
    /// `email_taken`: This email address is already used by another account.
    public static let emailTaken: Self = "email_taken"
    /// `login_taken`: This login is already taken.
    public static let loginTaken: Self = "login_taken"
    /// `invalid_credentials`: Wrong login or password.
    public static let invalidCredentials: Self = "invalid_credentials"
    /// A refresh token that is unknown, used, expired, or whose session ended: sign in again.
    public static let refreshTokenInvalid: Self = "refresh_token_invalid"
    /// `account_not_found`: No account matches these details.
    public static let accountNotFound: Self = "account_not_found"
    /// `no_email`: The account has no email address.
    public static let noEmail: Self = "no_email"
    /// `email_already_confirmed`: The email address is already confirmed.
    public static let emailAlreadyConfirmed: Self = "email_already_confirmed"
    /// `email_not_confirmed`: The account's email address is not confirmed; restore the password by SMS.
    public static let emailNotConfirmed: Self = "email_not_confirmed"
    /// `no_phone`: The account has no phone number; restore the password by email.
    public static let noPhone: Self = "no_phone"
    /// `phone_change_not_allowed`: this surface does not change a verified phone number.
    public static let phoneChangeNotAllowed: Self = "phone_change_not_allowed"
    /// `tag_taken`: This tag is already taken.
    public static let tagTaken: Self = "tag_taken"
    /// `email_unchanged`: This is already the account's email address.
    public static let emailUnchanged: Self = "email_unchanged"
    /// `phone_already_verified`: This phone number is already verified on the account.
    public static let phoneAlreadyVerified: Self = "phone_already_verified"
    /// `no_pending_email`: No email change is waiting for confirmation.
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
    /// `passkey_not_found`: No such passkey.
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
    /// `identity_not_found`: No such linked sign-in.
    public static let identityNotFound: Self = "identity_not_found"
    /// Removing it would leave the account no way in (no password, passkey, other identity, or confirmed address).
    public static let lastWayIn: Self = "last_way_in"
    // Push
    /// `device_not_found`: There is no such device.
    public static let deviceNotFound: Self = "device_not_found"
    /// An account has as many push devices as it may.
    public static let tooManyDevices: Self = "too_many_devices"
    // The admin API
    /// The admin key is valid but lacks the scope the operation needs.
    public static let insufficientScope: Self = "insufficient_scope"
    /// `client_not_found`: no client record has this id.
    public static let clientNotFound: Self = "client_not_found"
    /// The admin API: no such webhook endpoint, or no such webhook delivery given up on.
    public static let webhookNotFound: Self = "webhook_not_found"
    /// `delivery_not_found`: no webhook delivery of this endpoint has this id.
    public static let deliveryNotFound: Self = "delivery_not_found"
    /// A change that opens a new way into the account (email, phone, password) needs the current password.
    public static let currentPasswordRequired: Self = "current_password_required"
    /// A phone number in a country this server does not send SMS to.
    public static let phoneCountryNotAllowed: Self = "phone_country_not_allowed"
    // Codes
    /// `invalid_code`: The code is wrong. Check it or request a new one.
    public static let invalidCode: Self = "invalid_code"
    /// `code_expired`: The code has expired. Request a new one.
    public static let codeExpired: Self = "code_expired"
    /// `code_attempts_exhausted`: Too many wrong attempts: this code no longer works. Request a new one.
    public static let codeAttemptsExhausted: Self = "code_attempts_exhausted"
    // Limits
    /// `rate_limited`: Too many requests. Try again in … s.
    public static let rateLimited: Self = "rate_limited"
    /// `resend_too_soon`: A message was sent a moment ago. You can request a new one in … s.
    public static let resendTooSoon: Self = "resend_too_soon"
    // Sessions
    /// `unauthorized`: Authorization required: the session token is missing, invalid or expired.
    public static let unauthorized: Self = "unauthorized"
    /// `session_not_found`: No such session.
    public static let sessionNotFound: Self = "session_not_found"
    // Messenger
    /// `person_not_found`: No such person.
    public static let personNotFound: Self = "person_not_found"
    /// `request_not_found`: No such friend request.
    public static let requestNotFound: Self = "request_not_found"
    /// `chat_not_found`: No such chat.
    public static let chatNotFound: Self = "chat_not_found"
    /// `message_not_found`: No such message.
    public static let messageNotFound: Self = "message_not_found"
    /// `attachment_not_found`: No such attachment.
    public static let attachmentNotFound: Self = "attachment_not_found"
    /// Only an account with a tag is a person: the messenger needs one.
    public static let tagRequired: Self = "tag_required"
    /// The person takes messages from friends only.
    public static let messagingNotAllowed: Self = "messaging_not_allowed"
    /// `not_yourself`: That is you.
    public static let notYourself: Self = "not_yourself"
    /// `not_friends`: You are not friends.
    public static let notFriends: Self = "not_friends"
    /// `empty_message`: A message needs text or an attachment.
    public static let emptyMessage: Self = "empty_message"
    /// `invalid_text`: The text contains control characters.
    public static let invalidText: Self = "invalid_text"
    /// `too_many_attachments`: At most … attachments per message.
    public static let tooManyAttachments: Self = "too_many_attachments"
    /// `not_message_author`: Only the author can do this to a message.
    public static let notMessageAuthor: Self = "not_message_author"
    /// `edit_window_closed`: Messages can be edited for … hours after sending.
    public static let editWindowClosed: Self = "edit_window_closed"
    /// `message_deleted`: The message was deleted.
    public static let messageDeleted: Self = "message_deleted"
    /// A `clientMessageId` already used for a message in another chat.
    public static let clientMessageIdReused: Self = "client_message_id_reused"
    /// `range_not_satisfiable`: The range is outside the file.
    public static let rangeNotSatisfiable: Self = "range_not_satisfiable"
    /// `too_many_blocks`: You may block at most … people.
    public static let tooManyBlocks: Self = "too_many_blocks"
    /// `app_not_found`: No such app.
    public static let appNotFound: Self = "app_not_found"
    /// No Sign To Login profile (no enrolment, or it was deleted).
    public static let signatureProfileNotFound: Self = "signature_profile_not_found"
    /// `invalid_bundle_id`: "…" is not a bundle ID (letters, digits and hyphens in two or more parts separated by dots,
    /// such as com.example.app).
    public static let invalidBundleId: Self = "invalid_bundle_id"
    /// `invalid_url`: "…" is not an http or https address.
    public static let invalidURL: Self = "invalid_url"
    /// `too_many_apps`: An account may register at most … apps.
    public static let tooManyApps: Self = "too_many_apps"
    /// An account that owns an enabled app cannot be deleted: disable its apps first.
    public static let appsEnabled: Self = "apps_enabled"
    // Delivery
    // Wallet
    /// `wallet_not_found`: No wallet yet: attach one to your verified phone first.
    public static let walletNotFound: Self = "wallet_not_found"
    /// An account whose wallet holds money cannot be deleted: pay it out first.
    public static let walletNotEmpty: Self = "wallet_not_empty"
    /// A wallet is attached to a verified phone: verify one first.
    public static let phoneNotVerified: Self = "phone_not_verified"
    /// `recipient_not_found`: Nobody with a wallet has this phone, tag or email.
    public static let recipientNotFound: Self = "recipient_not_found"
    /// `transfer_not_found`: No such transfer.
    public static let transferNotFound: Self = "transfer_not_found"
    /// `money_request_not_found`: No such money request.
    public static let moneyRequestNotFound: Self = "money_request_not_found"
    /// `insufficient_funds`: Not enough money in the wallet.
    public static let insufficientFunds: Self = "insufficient_funds"
    /// `invalid_amount`: The amount must be a whole number of kopecks, at least 1.
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
    /// `topup_not_found`: No such top-up.
    public static let topUpNotFound: Self = "topup_not_found"
    /// The payment provider could not be reached or refused the call: try again with the same key.
    public static let paymentProviderUnavailable: Self = "payment_provider_unavailable"
    /// A payment provider's notification that is not believed or does not match (its detail says why).
    public static let notificationRefused: Self = "notification_refused"
    /// `delivery_failed`: The message could not be sent: …
    public static let deliveryFailed: Self = "delivery_failed"
    // Server
    /// `internal_error`: the server failed; the request id in the answer finds it in the server's log.
    public static let internalError: Self = "internal_error"
    /// `service_unavailable`: a part the server needs (its database) is away for a moment: try again after
    /// `Retry-After`, with the same `Idempotency-Key` where the request has one.
    public static let serviceUnavailable: Self = "service_unavailable"
    /// `not_found`: Not found.
    public static let notFound: Self = "not_found"
    /// `method_not_allowed`: Method not allowed.
    public static let methodNotAllowed: Self = "method_not_allowed"
}
