import Foundation

extension V1 {
    /// Accounts: sign-up, tags, password recovery, the profile, email and phone changes, avatars.
    public enum Accounts {
        /// Sends a sign-up code to an email address or a phone.
        public static let signupCode = Endpoint<CodeRequest, CodeSent>(.post, "/v1/signup/code", success: 202, access: .anyone)
        /// Creates the account with the code; answers a session.
        public static let signup = Endpoint<SignupRequest, AuthSession>(.post, "/v1/signup", success: 201, access: .anyone)
        /// Whether a tag is free.
        public static let tag = Endpoint<NoContent, TagAvailability>(.get, "/v1/tags/{tag}", access: .anyone)
        /// Sends a password-recovery code.
        public static let recoveryCode = Endpoint<CodeRequest, CodeSent>(.post, "/v1/recovery/code", success: 202, access: .anyone)
        /// Sets a new password with the recovery code.
        public static let recover = Endpoint<RecoveryRequest, NoContent>(.post, "/v1/recovery", success: 204, access: .anyone)
        /// My account.
        public static let me = Endpoint<NoContent, Account>(.get, "/v1/me")
        /// Changes my profile (a JSON merge patch).
        public static let updateProfile = Endpoint<ProfileUpdate, Account>(.patch, "/v1/me")
        /// Changes the password (needs the current one).
        public static let changePassword = Endpoint<PasswordChange, NoContent>(.post, "/v1/me/password", success: 204)
        /// Starts an email change: a code goes to the new address.
        public static let requestEmailChange = Endpoint<EmailChangeRequest, CodeSent>(.post, "/v1/me/email", success: 202)
        /// Drops the pending address.
        public static let cancelEmailChange = Endpoint<NoContent, Account>(.delete, "/v1/me/email")
        /// Confirms the new address with its code.
        public static let verifyEmailChange = Endpoint<CodeVerification, Account>(.post, "/v1/me/email/verify")
        /// Sends a code to a phone to attach it to the account.
        public static let requestPhoneVerification = Endpoint<PhoneVerificationRequest, CodeSent>(.post, "/v1/me/phone", success: 202)
        /// Attaches the phone with its code.
        public static let verifyPhone = Endpoint<CodeVerification, Account>(.post, "/v1/me/phone/verify")
        /// Sets the avatar: a raw image body with `Content-Type: image/…`.
        public static let uploadAvatar = Endpoint<RawBody, Account>(.put, "/v1/me/avatar")
        /// Removes the avatar.
        public static let removeAvatar = Endpoint<NoContent, Account>(.delete, "/v1/me/avatar")
        /// An avatar image: public, immutable (a new upload gets a new id).
        public static let avatarImage = Endpoint<NoContent, RawBody>(.get, "/v1/avatars/{id}", access: .anyone)

        /// Deletes my account: every session ends at once, and its personal data is erased after the
        /// grace period unless I log in with my password before then (which cancels the deletion).
        public static let deleteMe = Endpoint<AccountDeletionRequest, AccountDeletion>(.delete, "/v1/me", success: 202)

        /// My account's security events, newest first (`?cursor=`, `?limit=`): sign-ins (failed ones
        /// counted per address and hour), password, email and phone changes, recovery requests,
        /// sessions ended, with the address and device of each.
        public static let myEvents = Endpoint<PageQuery, SecurityEventPage>(.get, "/v1/me/events")

        /// Registers a push token for the current session (replacing one it registered before); a
        /// token registered by another account moves here. Logging out removes it.
        public static let registerDevice = Endpoint<DeviceRegistration, PushDevice>(.post, "/v1/me/devices", success: 201)
        /// My devices that receive pushes.
        public static let devices = Endpoint<NoContent, PushDeviceList>(.get, "/v1/me/devices")
        /// Removes one of my devices (another account's id is 404).
        public static let removeDevice = Endpoint<NoContent, NoContent>(.delete, "/v1/me/devices/{id}", success: 204)

        /// My push settings.
        public static let notificationSettings = Endpoint<NoContent, NotificationSettings>(.get, "/v1/me/notifications")
        /// Changes my push settings (absent members stay).
        public static let updateNotificationSettings = Endpoint<NotificationSettingsUpdate, NotificationSettings>(.patch, "/v1/me/notifications")

        /// Every operation above (the tests check it against the router and the OpenAPI document).
        public static let all: [any EndpointDeclaration] = [
            signupCode, signup, tag, recoveryCode, recover, me, updateProfile, deleteMe, changePassword, requestEmailChange,
            cancelEmailChange, verifyEmailChange, requestPhoneVerification, verifyPhone, uploadAvatar, removeAvatar, avatarImage,
            myEvents, registerDevice, devices, removeDevice, notificationSettings, updateNotificationSettings,
        ]
    }
}
