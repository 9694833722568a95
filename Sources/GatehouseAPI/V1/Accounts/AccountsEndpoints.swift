import Foundation

extension V1 {
    /// Accounts: sign-up, tags, password recovery, the profile, email and phone changes, avatars.
    public enum Accounts {
        /// Sends a sign-up code to an email address or a phone.
        public static let signupCode = Endpoint<CodeRequest, CodeSent>(.post, "/v1/signup/code", success: 202, access: .anyone)
            .operation("requestSignupCode", "Send a sign-up code to an email address or a phone", tags: "Sign-up")
            .errors([400: [.missingParameter, .invalidParameter, .invalidEmail, .invalidPhone, .fieldTooLong, .malformedBody]])
            .shared(.payloadTooLarge, .unsupportedMediaType, .tooManyRequests, .unexpectedProblem)
        /// Creates the account with the code; answers a session.
        public static let signup = Endpoint<SignupRequest, AuthSession>(.post, "/v1/signup", success: 201, access: .anyone)
            .operation("signUp", "Create the account with the code", tags: "Sign-up")
            .errors([400: [.missingParameter, .invalidParameter, .invalidEmail, .invalidPhone, .invalidTag, .weakPassword, .invalidDate, .invalidLocale, .fieldTooLong, .invalidCode, .codeExpired, .codeAttemptsExhausted, .malformedBody], 409: [.tagTaken, .emailTaken, .phoneTaken]])
            .shared(.payloadTooLarge, .unsupportedMediaType, .tooManyRequests, .unexpectedProblem)
        /// Whether a tag is free.
        public static let tag = Endpoint<NoContent, TagAvailability>(.get, "/v1/tags/{tag}", access: .anyone)
            .path("tag", .tagInPath)
            .operation("getTagAvailability", "Whether a tag is free", tags: "Sign-up")
            .errors([400: [.invalidTag]])
            .shared(.unexpectedProblem)
        /// Sends a password-recovery code.
        public static let recoveryCode = Endpoint<CodeRequest, CodeSent>(.post, "/v1/recovery/code", success: 202, access: .anyone)
            .operation("requestRecoveryCode", "Send a password-recovery code", tags: "Recovery")
            .errors([400: [.missingParameter, .invalidParameter, .invalidEmail, .invalidPhone, .fieldTooLong, .malformedBody]])
            .shared(.payloadTooLarge, .unsupportedMediaType, .tooManyRequests, .unexpectedProblem)
        /// Sets a new password with the recovery code.
        public static let recover = Endpoint<RecoveryRequest, NoContent>(.post, "/v1/recovery", success: 204, access: .anyone)
            .operation("recoverPassword", "Set a new password with the recovery code", tags: "Recovery")
            .errors([400: [.missingParameter, .invalidParameter, .invalidEmail, .invalidPhone, .invalidCode, .codeExpired, .codeAttemptsExhausted, .weakPassword, .fieldTooLong, .malformedBody]])
            .shared(.payloadTooLarge, .unsupportedMediaType, .tooManyRequests, .unexpectedProblem)
        /// My account.
        public static let me = Endpoint<NoContent, Account>(.get, "/v1/me")
            .operation("getAccount", "My account", tags: "Account")
            .shared(.unauthorized, .unexpectedProblem)
        /// Changes my profile (a JSON merge patch).
        public static let updateProfile = Endpoint<ProfileUpdate, Account>(.patch, "/v1/me")
            .operation("updateProfile", "Edit my profile (JSON merge patch)", tags: "Account")
            .errors([400: [.invalidTag, .invalidDate, .invalidLocale, .invalidParameter, .fieldTooLong, .malformedBody], 409: [.tagTaken]])
            .shared(.unauthorized, .payloadTooLarge, .unsupportedMediaType, .unexpectedProblem)
        /// Changes the password (needs the current one).
        public static let changePassword = Endpoint<PasswordChange, NoContent>(.post, "/v1/me/password", success: 204)
            .operation("changePassword", "Change my password", tags: "Account")
            .errors([400: [.invalidCredentials, .weakPassword, .missingParameter, .fieldTooLong, .malformedBody]])
            .shared(.unauthorized, .payloadTooLarge, .unsupportedMediaType, .tooManyRequests, .unexpectedProblem)
        /// Starts an email change: a code goes to the new address.
        public static let requestEmailChange = Endpoint<EmailChangeRequest, CodeSent>(.post, "/v1/me/email", success: 202)
            .operation("requestEmailChange", "Start an email change", tags: "Account")
            .errors([400: [.invalidEmail, .emailUnchanged, .currentPasswordRequired, .invalidCredentials, .missingParameter, .fieldTooLong, .malformedBody], 409: [.emailTaken]])
            .shared(.unauthorized, .payloadTooLarge, .unsupportedMediaType, .tooManyRequests, .unexpectedProblem)
        /// Drops the pending address.
        public static let cancelEmailChange = Endpoint<NoContent, Account>(.delete, "/v1/me/email")
            .operation("cancelEmailChange", "Cancel the pending email change", tags: "Account")
            .errors([400: [.noPendingEmail]])
            .shared(.unauthorized, .unexpectedProblem)
        /// Confirms the new address with its code.
        public static let verifyEmailChange = Endpoint<CodeVerification, Account>(.post, "/v1/me/email/verify")
            .operation("verifyEmailChange", "Confirm the new address with its code", tags: "Account")
            .errors([400: [.noPendingEmail, .invalidCode, .codeExpired, .codeAttemptsExhausted, .missingParameter, .fieldTooLong, .malformedBody], 409: [.emailTaken]])
            .shared(.unauthorized, .payloadTooLarge, .unsupportedMediaType, .tooManyRequests, .unexpectedProblem)
        /// Sends a code to a phone to attach it to the account.
        public static let requestPhoneVerification = Endpoint<PhoneVerificationRequest, CodeSent>(.post, "/v1/me/phone", success: 202)
            .operation("requestPhoneVerification", "Send an SMS code to attach a phone", tags: "Account")
            .errors([400: [.invalidPhone, .phoneAlreadyVerified, .phoneCountryNotAllowed, .currentPasswordRequired, .invalidCredentials, .missingParameter, .fieldTooLong, .malformedBody], 409: [.phoneTaken]])
            .shared(.unauthorized, .payloadTooLarge, .unsupportedMediaType, .tooManyRequests, .unexpectedProblem)
        /// Attaches the phone with its code.
        public static let verifyPhone = Endpoint<CodeVerification, Account>(.post, "/v1/me/phone/verify")
            .operation("verifyPhone", "Attach the phone with its code", tags: "Account")
            .errors([400: [.missingParameter, .invalidPhone, .invalidCode, .codeExpired, .codeAttemptsExhausted, .fieldTooLong, .malformedBody], 409: [.phoneTaken]])
            .shared(.unauthorized, .payloadTooLarge, .unsupportedMediaType, .tooManyRequests, .unexpectedProblem)
        /// Sets the avatar: a raw image body with `Content-Type: image/…`.
        public static let uploadAvatar = Endpoint<RawBody, Account>(.put, "/v1/me/avatar")
            .operation("uploadAvatar", "Set my avatar", tags: "Account")
            .errors([400: [.invalidImage]])
            .shared(.unauthorized, .payloadTooLarge, .unsupportedMediaType, .unexpectedProblem)
        /// Removes the avatar.
        public static let removeAvatar = Endpoint<NoContent, Account>(.delete, "/v1/me/avatar")
            .operation("deleteAvatar", "Remove my avatar", tags: "Account")
            .shared(.unauthorized, .unexpectedProblem)
        /// An avatar image: public, immutable (a new upload gets a new id).
        public static let avatarImage = Endpoint<NoContent, RawBody>(.get, "/v1/avatars/{id}", access: .anyone)
            .operation("getAvatar", "An avatar image", tags: "Account")
            .errors([404: [.notFound]])
            .shared(.unexpectedProblem)
            .uuid(notFound: .notFound)

        /// Deletes my account: every session ends at once, and its personal data is erased after the
        /// grace period unless I log in with my password before then (which cancels the deletion).
        public static let deleteMe = Endpoint<AccountDeletionRequest, AccountDeletion>(.delete, "/v1/me", success: 202)
            .operation("deleteAccount", "Delete my account", tags: "Account")
            .errors([400: [.invalidCredentials, .currentPasswordRequired, .identityTokenInvalid, .fieldTooLong, .malformedBody], 409: [.walletNotEmpty, .appsEnabled]])
            .shared(.unauthorized, .payloadTooLarge, .unsupportedMediaType, .tooManyRequests, .unexpectedProblem)

        /// My account's security events, newest first (`?cursor=`, `?limit=`): sign-ins (failed ones
        /// counted per address and hour), password, email and phone changes, recovery requests,
        /// sessions ended, with the address and device of each.
        public static let myEvents = Endpoint<PageQuery, SecurityEventPage>(.get, "/v1/me/events")
            .operation("listMySecurityEvents", "My security events", tags: "Account")
            .errors([400: [.invalidParameter]])
            .shared(.unauthorized, .tooManyRequests, .unexpectedProblem)

        /// Registers a push token for the current session (replacing one it registered before); a
        /// token registered by another account moves here. Logging out removes it.
        public static let registerDevice = Endpoint<DeviceRegistration, PushDevice>(.post, "/v1/me/devices", success: 201)
            .operation("registerDevice", "Register a push token for this session", tags: "Account")
            .errors([400: [.invalidParameter, .malformedBody], 422: [.tooManyDevices]])
            .shared(.unauthorized, .unexpectedProblem)
        /// My devices that receive pushes.
        public static let devices = Endpoint<NoContent, PushDeviceList>(.get, "/v1/me/devices")
            .operation("listMyDevices", "My push devices", tags: "Account")
            .shared(.unauthorized, .unexpectedProblem)
        /// Removes one of my devices (another account's id is 404).
        public static let removeDevice = Endpoint<NoContent, NoContent>(.delete, "/v1/me/devices/{id}", success: 204)
            .operation("removeDevice", "Remove one of my push devices", tags: "Account")
            .errors([404: [.deviceNotFound]])
            .shared(.unauthorized, .unexpectedProblem)
            .uuid(notFound: .deviceNotFound)

        /// My push settings.
        public static let notificationSettings = Endpoint<NoContent, NotificationSettings>(.get, "/v1/me/notifications")
            .operation("getNotificationSettings", "My push settings", tags: "Account")
            .shared(.unauthorized, .unexpectedProblem)
        /// Changes my push settings (absent members stay).
        public static let updateNotificationSettings = Endpoint<NotificationSettingsUpdate, NotificationSettings>(.patch, "/v1/me/notifications")
            .operation("updateNotificationSettings", "Change my push settings", tags: "Account")
            .errors([400: [.malformedBody]])
            .shared(.unauthorized, .unexpectedProblem)

        /// Every operation above (the tests check it against the router and the OpenAPI document).
        public static let all: [any EndpointDeclaration] = [
            signupCode, signup, tag, recoveryCode, recover, me, updateProfile, deleteMe, changePassword, requestEmailChange,
            cancelEmailChange, verifyEmailChange, requestPhoneVerification, verifyPhone, uploadAvatar, removeAvatar, avatarImage,
            myEvents, registerDevice, devices, removeDevice, notificationSettings, updateNotificationSettings,
        ]
    }
}
