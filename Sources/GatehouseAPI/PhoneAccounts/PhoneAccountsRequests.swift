import Foundation

/// `POST /api/users/register` parameters, named as the spec names them.
public struct PhoneRegisterRequest: Sendable, Equatable {
    public var phone: String
    public var code: String
    public var login: String?
    public var password: String?
    /// First name (`name` on the wire).
    public var firstName: String?
    /// Last name (`lastname`).
    public var lastName: String?
    /// Patronymic (`surname`, as the spec says).
    public var middleName: String?
    public var email: String?
    /// `dd.MM.yyyy HH:mm:ss` or ISO 8601.
    public var birthday: String?

    public init(phone: String, code: String, login: String? = nil, password: String? = nil, firstName: String? = nil,
                lastName: String? = nil, middleName: String? = nil, email: String? = nil, birthday: String? = nil) {
        self.phone = phone
        self.code = code
        self.login = login
        self.password = password
        self.firstName = firstName
        self.lastName = lastName
        self.middleName = middleName
        self.email = email
        self.birthday = birthday
    }

    /// The form fields, in the spec's names; absent values are not sent.
    public var formFields: [(String, String)] {
        typealias K = PhoneAccountsAPI.Parameter
        let pairs: [(String, String?)] = [
            (K.phone, phone), (K.code, code), (K.login, login), (K.password, password), (K.name, firstName),
            (K.lastName, lastName), (K.surname, middleName), (K.email, email), (K.birthday, birthday),
        ]
        return pairs.compactMap { name, value in value.map { (name, $0) } }
    }
}

/// `POST /api/users/change` parameters: only what is set is sent, and only that changes.
public struct PhoneProfileChange: Sendable, Equatable {
    public var firstName: String?
    public var lastName: String?
    public var middleName: String?
    public var email: String?
    public var birthday: String?
    public var fcm: String?
    /// A new password (not in the spec); needs `currentPassword`.
    public var password: String?
    /// The password in use: needed for `password`, and for `email` unless the account has no confirmed
    /// address and logged in within the last minutes.
    public var currentPassword: String?

    public init(firstName: String? = nil, lastName: String? = nil, middleName: String? = nil, email: String? = nil,
                birthday: String? = nil, fcm: String? = nil, password: String? = nil, currentPassword: String? = nil) {
        self.firstName = firstName
        self.lastName = lastName
        self.middleName = middleName
        self.email = email
        self.birthday = birthday
        self.fcm = fcm
        self.password = password
        self.currentPassword = currentPassword
    }

    public var formFields: [(String, String)] {
        typealias K = PhoneAccountsAPI.Parameter
        let pairs: [(String, String?)] = [
            (K.name, firstName), (K.lastName, lastName), (K.surname, middleName), (K.email, email), (K.birthday, birthday), (K.fcm, fcm),
            (K.password, password), (K.currentPassword, currentPassword),
        ]
        return pairs.compactMap { name, value in value.map { (name, $0) } }
    }
}

/// How `POST /api/users/restore` finds the account.
public enum PhoneRestoreIdentifier: Sendable, Equatable {
    case phone(String)
    case email(String)
    case login(String)

    public var formField: (String, String) {
        switch self {
        case .phone(let value): (PhoneAccountsAPI.Parameter.phone, value)
        case .email(let value): (PhoneAccountsAPI.Parameter.mail, value)
        case .login(let value): (PhoneAccountsAPI.Parameter.login, value)
        }
    }
}

/// `application/x-www-form-urlencoded` encoding, shared by the SDK and the tests.
public enum FormURLEncoding {
    private static let allowed: CharacterSet = {
        var set = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)..<Unicode.Scalar(128)))
        set.insert(charactersIn: "-._~")
        return set
    }()

    public static func encode(_ fields: [(String, String)]) -> String {
        fields.map { "\(escape($0.0))=\(escape($0.1))" }.joined(separator: "&")
    }

    public static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}
