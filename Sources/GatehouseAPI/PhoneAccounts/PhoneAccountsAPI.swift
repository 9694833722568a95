/// The phone-first REST API of `docs/phone-accounts.md`: paths and parameter names,
/// written once for the server, the SDK and the tests.
public enum PhoneAccountsAPI {
    public enum Path {
        public static let sendSMS = "/api/users/sms"
        public static let register = "/api/users/register"
        public static let login = "/api/auth/login"
        public static let logout = "/api/auth/logout"
        public static let user = "/api/users/user"
        public static let change = "/api/users/change"
        public static let sendConfirm = "/api/users/send-confirm"
        public static let confirm = "/api/users/confirm"
        public static let restore = "/api/users/restore"
    }

    /// Request parameter names. The server matches them case-insensitively.
    public enum Parameter {
        public static let phone = "phone"
        public static let login = "login"
        public static let password = "password"
        public static let name = "name"
        public static let firstName = "firstName"
        public static let lastName = "lastname"
        public static let surname = "surname"
        public static let code = "code"
        public static let email = "email"
        public static let mail = "mail"
        public static let birthday = "birthday"
        public static let fcm = "fcm"
        public static let sms = "sms"
        public static let id = "id"
        /// Not in the spec: the current password, for `users/change` of the email or the password.
        public static let currentPassword = "current_password"
    }

    /// The response header that carries a ``GatehouseErrorCode`` next to the plain-text message.
    public static let errorCodeHeader = "X-Error-Code"
}
