import Foundation

/// `POST /api/users/register` parameters, named as the spec names them.
public struct PhoneRegisterRequest: Sendable, Equatable {
    /// The phone number, as typed (the server normalises it).
    public var phone: String
    /// The code sent by SMS.
    public var code: String
    /// A login name, if the person chose one.
    public var login: String?
    /// A password, if the person chose one.
    public var password: String?
    /// First name (`name` on the wire).
    public var firstName: String?
    /// Last name (`lastname`).
    public var lastName: String?
    /// Patronymic (`surname`, as the spec says).
    public var middleName: String?
    /// The email address.
    public var email: String?
    /// `dd.MM.yyyy HH:mm:ss` or ISO 8601.
    public var birthday: String?

    /// Makes one of its members, each as its property describes.
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
    /// The first name.
    public var firstName: String?
    /// The last name.
    public var lastName: String?
    /// The middle name (patronymic).
    public var middleName: String?
    /// The email address.
    public var email: String?
    /// The birthday, `YYYY-MM-DD`.
    public var birthday: String?
    /// The device's push token (FCM).
    public var fcm: String?
    /// A new password (not in the spec); needs `currentPassword`.
    public var password: String?
    /// The password in use: needed for `password`, and for `email` unless the account has no confirmed
    /// address and logged in within the last minutes.
    public var currentPassword: String?

    /// Makes one of its members, each as its property describes.
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

    /// The change as form fields.
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
    /// The account by its phone number.
    case phone(String)
    /// The account by its email address.
    case email(String)
    /// The account by its login (a login name, phone or email).
    case login(String)

    /// The form field that names it.
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

    /// Encodes fields as `application/x-www-form-urlencoded`.
    public static func encode(_ fields: [(String, String)]) -> String {
        fields.map { "\(escape($0.0))=\(escape($0.1))" }.joined(separator: "&")
    }

    /// Escapes a name or value for a form (spaces as `+`).
    public static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}
