/// The phone-first REST API of `docs/phone-accounts.md`: paths and parameter names,
/// written once for the server, the SDK and the tests.
public enum PhoneAccountsAPI {
    /// The spec's paths.
    public enum Path {
        /// Sends a code by SMS.
        public static let sendSMS = "/api/users/sms"
        /// Registers with the code.
        public static let register = "/api/users/register"
        /// Logs in.
        public static let login = "/api/auth/login"
        /// Logs out (ends the session).
        public static let logout = "/api/auth/logout"
        /// The signed-in user.
        public static let user = "/api/users/user"
        /// Changes the signed-in user.
        public static let change = "/api/users/change"
        /// Sends a code to confirm an email address.
        public static let sendConfirm = "/api/users/send-confirm"
        /// Confirms an email address (the link in the mail).
        public static let confirm = "/api/users/confirm"
        /// Sends a temporary password.
        public static let restore = "/api/users/restore"
    }

    /// Every operation, declared once: the router serves these, and the API document is built
    /// from them (the form fields of the bodies are in the document's prose).
    public enum Endpoints {
        /// `POST /api/users/sms`: sends a code to the phone.
        public static let sendSMS = Endpoint<FormBody, NoContent>(.post, Path.sendSMS, access: .anyone)
            .operation("phoneSendSignupCode", "Send a sign-up code by SMS", tags: "Phone accounts")
            .errors([400: [.missingParameter, .invalidPhone, .phoneTaken, .deliveryFailed, .fieldTooLong, .bodyTooLarge, .malformedBody]], format: .plainText)
            .shared(.phoneTooManyRequests, .phoneServerError)
            .headers(.acceptLanguage)
            .form([.urlencoded], [.text("phone", .phone, required: true)], component: "PhoneSendSMSForm")
        /// `POST /api/users/register`: registers the phone with its code; answers a token.
        public static let register = Endpoint<FormBody, PhoneRegisterResponse>(.post, Path.register, access: .anyone)
            .operation("phoneRegister", "Create the account with the SMS code", tags: "Phone accounts")
            .errors([400: [.missingParameter, .invalidPhone, .invalidLogin, .invalidEmail, .invalidDate, .weakPassword, .phoneTaken, .loginTaken, .emailTaken, .invalidCode, .codeExpired, .codeAttemptsExhausted, .fieldTooLong, .bodyTooLarge, .malformedBody]], format: .plainText)
            .shared(.phoneServerError)
            .headers(.acceptLanguage)
            .form([.urlencoded], [.text("phone", .phone, required: true), .text("code", .code, required: true), .text("login", .login), .text("password", .newPassword), .text("name", .text), .text("firstName", .text), .text("lastname", .text), .text("surname", .text), .text("email", .email), .text("birthday", .birthdayText)], component: "PhoneRegisterForm")
        /// `POST /api/auth/login`: logs in with a login (phone, email or login name) and password; answers a token.
        public static let login = Endpoint<FormBody, PhoneLoginResponse>(.post, Path.login, access: .anyone)
            .operation("phoneLogin", "Get a session token", tags: "Phone accounts")
            .errors([400: [.missingParameter, .invalidCredentials, .fieldTooLong, .bodyTooLarge, .malformedBody]], format: .plainText)
            .shared(.phoneTooManyRequests, .phoneServerError)
            .headers(.acceptLanguage)
            .form([.urlencoded], [.text("login", .typedNotBlank, required: true), .text("password", .typedNotBlank, required: true)], component: "PhoneLoginForm")
        /// `POST /api/auth/logout`: ends the session of the token.
        public static let logout = Endpoint<NoContent, NoContent>(.post, Path.logout)
            .operation("phoneLogout", "End the session", tags: "Phone accounts")
            .shared(.phoneUnauthorized, .phoneServerError)
            .headers(.acceptLanguage)
        /// `GET /api/users/user`: the signed-in user.
        public static let user = Endpoint<NoContent, PhoneUser>(.get, Path.user)
            .operation("phoneGetUser", "The current user", tags: "Phone accounts")
            .shared(.phoneUnauthorized, .phoneServerError)
            .headers(.acceptLanguage)
        /// `POST /api/users/change`: changes the signed-in user's profile; answers it.
        public static let change = Endpoint<FormBody, PhoneUser>(.post, Path.change)
            .operation("phoneChangeProfile", "Edit the profile", tags: "Phone accounts")
            .errors([400: [.invalidEmail, .emailTaken, .invalidDate, .invalidPhone, .phoneChangeNotAllowed, .missingParameter, .fieldTooLong, .bodyTooLarge, .malformedBody]], format: .plainText)
            .shared(.phoneUnauthorized, .phoneServerError)
            .headers(.acceptLanguage)
            .form([.urlencoded], [.text("name", .text), .text("firstName", .text), .text("lastname", .text), .text("surname", .text), .text("birthday", .birthdayText), .text("fcm", .text), .text("email", .email), .text("phone", .phone)], component: "PhoneChangeForm", required: false)
        /// Answers the JSON string `"ok"`.
        public static let sendConfirm = Endpoint<NoContent, String>(.post, Path.sendConfirm)
            .operation("phoneSendEmailConfirmation", "Mail a confirmation link", tags: "Phone accounts")
            .errors([400: [.noEmail, .emailAlreadyConfirmed, .deliveryFailed]], format: .plainText)
            .shared(.phoneUnauthorized, .phoneTooManyRequests, .phoneServerError)
            .headers(.acceptLanguage)
        /// The page a confirmation link opens, and its button (HTML).
        public static let confirmPage = Endpoint<NoContent, RawBody>(.get, Path.confirm, access: .anyone, query: [QueryParameter(Parameter.id, .described(.linkToken), required: true)])
            .operation("phoneConfirmEmail", "Open the link of a confirmation mail (browser)", tags: "Phone accounts")
            .errors([400: []], format: .page)
            .shared(.phoneServerError)
            .headers(.acceptLanguage)
        /// `POST /api/users/confirm`: confirms an email address from the mail's link; answers a page.
        public static let confirm = Endpoint<FormBody, RawBody>(.post, Path.confirm, access: .anyone, query: [QueryParameter(Parameter.id, .described(.text(max: 128)))])
            .operation("phoneConfirmEmailPress", "Confirm the address (the page's button)", tags: "Phone accounts")
            .errors([400: []], format: .page)
            .shared(.phoneServerError)
            .headers(.acceptLanguage)
            .form([.urlencoded], [.text("id", .text(max: 128))], required: false)
        /// `POST /api/users/restore`: sends a temporary password by SMS or mail.
        public static let restore = Endpoint<FormBody, NoContent>(.post, Path.restore, access: .anyone)
            .operation("phoneRestorePassword", "Send a temporary password", tags: "Phone accounts")
            .errors([400: [.missingParameter, .invalidParameter, .accountNotFound, .noEmail, .emailNotConfirmed, .noPhone, .deliveryFailed, .fieldTooLong, .bodyTooLarge, .malformedBody]], format: .plainText)
            .shared(.phoneTooManyRequests, .phoneServerError)
            .headers(.acceptLanguage)
            .form([.urlencoded], [.text("login", .text), .text("mail", .text), .text("email", .text), .text("phone", .text), .text("sms", .yesOrNo)], component: "PhoneRestoreForm")

        /// Every operation of `/api`.
        public static let all: [any EndpointDeclaration] = [
            sendSMS, register, login, logout, user, change, sendConfirm, confirmPage, confirm, restore,
        ]
    }

    /// Request parameter names. The server matches them case-insensitively.
    public enum Parameter {
        /// The phone number.
        public static let phone = "phone"
        /// A login: a phone number, an email address or a login name.
        public static let login = "login"
        /// The password.
        public static let password = "password"
        /// The login name.
        public static let name = "name"
        /// The first name.
        public static let firstName = "firstName"
        /// The last name (the spec spells it `lastname`).
        public static let lastName = "lastname"
        /// The surname (another spelling of the last name the spec takes).
        public static let surname = "surname"
        /// The code.
        public static let code = "code"
        /// The email address.
        public static let email = "email"
        /// The email address (another spelling the spec takes).
        public static let mail = "mail"
        /// The birthday.
        public static let birthday = "birthday"
        /// The device's push token (FCM).
        public static let fcm = "fcm"
        /// `true` restores by SMS to the phone instead of by mail.
        public static let sms = "sms"
        /// The confirmation's id (in the mail's link).
        public static let id = "id"
        /// Not in the spec: the current password, for `users/change` of the email or the password.
        public static let currentPassword = "current_password"
    }

    /// The response header that carries a ``GatehouseErrorCode`` next to the plain-text message.
    public static let errorCodeHeader = ResponseHeader.errorCode.name
}
