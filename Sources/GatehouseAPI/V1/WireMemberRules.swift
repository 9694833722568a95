import Foundation

// What the members of `/v1`'s wire types take beyond their Swift types (``MemberRule``), by their names on the
// wire, side by side: the API document is built with these (each rule says which check of the server it stands for).

extension Problem: DeclaresMemberRules {
    /// The rules its members follow on the wire (``DeclaresMemberRules``): the server checks them and the OpenAPI
    /// document lists them.
    public static let memberRules: [String: MemberRule] = ["status": .httpStatus, "attemptsLeft": .count, "retryAfter": .count]
}

extension CodeRequest: DeclaresMemberRules {
    /// The rules its members follow on the wire (``DeclaresMemberRules``): the server checks them and the OpenAPI
    /// document lists them.
    public static let memberRules: [String: MemberRule] = ["email": .email, "phone": .phone]
}

extension CodeSent: DeclaresMemberRules {
    /// The rules its members follow on the wire (``DeclaresMemberRules``): the server checks them and the OpenAPI
    /// document lists them.
    public static let memberRules: [String: MemberRule] = ["attemptsAllowed": .count, "codeLength": .minimum(1)]
}

extension SignupRequest: DeclaresMemberRules {
    /// The rules its members follow on the wire (``DeclaresMemberRules``): the server checks them and the OpenAPI
    /// document lists them.
    public static let memberRules: [String: MemberRule] = [
        "email": .email,
        "phone": .phone,
        "code": .code,
        "password": .newPassword,
        "firstName": .text,
        "lastName": .text,
        "tag": .tag,
        "birthday": .date,
        "locale": .locale,
        "device": .text,
    ]
}

extension Account: DeclaresMemberRules {
    /// The rules its members follow on the wire (``DeclaresMemberRules``): the server checks them and the OpenAPI
    /// document lists them.
    public static let memberRules: [String: MemberRule] = ["birthday": .date, "avatarUrl": .uri]
}

extension RecoveryRequest: DeclaresMemberRules {
    /// The rules its members follow on the wire (``DeclaresMemberRules``): the server checks them and the OpenAPI
    /// document lists them.
    public static let memberRules: [String: MemberRule] = ["email": .email, "phone": .phone, "code": .code, "password": .newPassword]
}

extension ProfileUpdate: DeclaresMemberRules {
    /// The rules its members follow on the wire (``DeclaresMemberRules``): the server checks them and the OpenAPI
    /// document lists them.
    public static let memberRules: [String: MemberRule] = [
        "firstName": .text,
        "lastName": .text,
        "middleName": .text,
        "tag": .tag,
        "birthday": .date,
        "locale": .locale,
    ]
}

extension PasswordChange: DeclaresMemberRules {
    /// The rules its members follow on the wire (``DeclaresMemberRules``): the server checks them and the OpenAPI
    /// document lists them.
    public static let memberRules: [String: MemberRule] = ["currentPassword": .typed, "newPassword": .newPassword]
}

extension EmailChangeRequest: DeclaresMemberRules {
    /// The rules its members follow on the wire (``DeclaresMemberRules``): the server checks them and the OpenAPI
    /// document lists them.
    public static let memberRules: [String: MemberRule] = ["currentPassword": .typed, "email": .email]
}

extension PhoneVerificationRequest: DeclaresMemberRules {
    /// The rules its members follow on the wire (``DeclaresMemberRules``): the server checks them and the OpenAPI
    /// document lists them.
    public static let memberRules: [String: MemberRule] = ["currentPassword": .typed, "phone": .phone]
}

extension CodeVerification: DeclaresMemberRules {
    /// The rules its members follow on the wire (``DeclaresMemberRules``): the server checks them and the OpenAPI
    /// document lists them.
    public static let memberRules: [String: MemberRule] = ["phone": .phone, "code": .code]
}

extension LoginRequest: DeclaresMemberRules {
    /// The rules its members follow on the wire (``DeclaresMemberRules``): the server checks them and the OpenAPI
    /// document lists them.
    public static let memberRules: [String: MemberRule] = ["identifier": .typed, "password": .typed, "device": .text]
}

extension AuthSession: DeclaresMemberRules {
    /// The rules its members follow on the wire (``DeclaresMemberRules``): the server checks them and the OpenAPI
    /// document lists them.
    public static let memberRules: [String: MemberRule] = ["tokenType": .constant("Bearer")]
}

extension SessionsRevoked: DeclaresMemberRules {
    /// The rules its members follow on the wire (``DeclaresMemberRules``): the server checks them and the OpenAPI
    /// document lists them.
    public static let memberRules: [String: MemberRule] = ["revoked": .count]
}

extension Person: DeclaresMemberRules {
    /// The rules its members follow on the wire (``DeclaresMemberRules``): the server checks them and the OpenAPI
    /// document lists them.
    public static let memberRules: [String: MemberRule] = ["avatarUrl": .uri]
}

extension Attachment: DeclaresMemberRules {
    /// The rules its members follow on the wire (``DeclaresMemberRules``): the server checks them and the OpenAPI
    /// document lists them.
    public static let memberRules: [String: MemberRule] = ["url": .uri]
}

extension DeveloperApp: DeclaresMemberRules {
    /// The rules its members follow on the wire (``DeclaresMemberRules``): the server checks them and the OpenAPI
    /// document lists them.
    public static let memberRules: [String: MemberRule] = ["email": .emailShown, "website": .uri, "iconUrl": .uri]
}

extension NewApp: DeclaresMemberRules {
    /// The rules its members follow on the wire (``DeclaresMemberRules``): the server checks them and the OpenAPI
    /// document lists them.
    public static let memberRules: [String: MemberRule] = ["name": .text(max: 100), "bundleId": .text(max: 155), "email": .emailShown, "website": .uri]
}

extension AppUpdate: DeclaresMemberRules {
    /// The rules its members follow on the wire (``DeclaresMemberRules``): the server checks them and the OpenAPI
    /// document lists them.
    public static let memberRules: [String: MemberRule] = ["name": .text(max: 100), "email": .emailShown, "minSimilarity": .fraction]
}

extension WalletInfo: DeclaresMemberRules {
    /// The rules its members follow on the wire (``DeclaresMemberRules``): the server checks them and the OpenAPI
    /// document lists them.
    public static let memberRules: [String: MemberRule] = ["currency": .choice(["RUB"]), "balance": .balance]
}

extension WalletParty: DeclaresMemberRules {
    /// The rules its members follow on the wire (``DeclaresMemberRules``): the server checks them and the OpenAPI
    /// document lists them.
    public static let memberRules: [String: MemberRule] = ["avatarUrl": .uri]
}

extension NewTransfer: DeclaresMemberRules {
    /// The rules its members follow on the wire (``DeclaresMemberRules``): the server checks them and the OpenAPI
    /// document lists them.
    public static let memberRules: [String: MemberRule] = ["amount": .amount]
}

extension Transfer: DeclaresMemberRules {
    /// The rules its members follow on the wire (``DeclaresMemberRules``): the server checks them and the OpenAPI
    /// document lists them.
    public static let memberRules: [String: MemberRule] = ["amount": .amount]
}

extension TransferResult: DeclaresMemberRules {
    /// The rules its members follow on the wire (``DeclaresMemberRules``): the server checks them and the OpenAPI
    /// document lists them.
    public static let memberRules: [String: MemberRule] = ["balance": .kopecks]
}

extension NewTopUp: DeclaresMemberRules {
    /// The rules its members follow on the wire (``DeclaresMemberRules``): the server checks them and the OpenAPI
    /// document lists them.
    public static let memberRules: [String: MemberRule] = ["amount": .amount]
}

extension TopUp: DeclaresMemberRules {
    /// The rules its members follow on the wire (``DeclaresMemberRules``): the server checks them and the OpenAPI
    /// document lists them.
    public static let memberRules: [String: MemberRule] = ["amount": .amount, "confirmationUrl": .uri, "refunded": .kopecks]
}

extension WalletTransaction: DeclaresMemberRules {
    /// The rules its members follow on the wire (``DeclaresMemberRules``): the server checks them and the OpenAPI
    /// document lists them.
    public static let memberRules: [String: MemberRule] = ["amount": .kopecks, "balanceAfter": .kopecks]
}

extension NewMoneyRequest: DeclaresMemberRules {
    /// The rules its members follow on the wire (``DeclaresMemberRules``): the server checks them and the OpenAPI
    /// document lists them.
    public static let memberRules: [String: MemberRule] = ["amount": .amount]
}

extension MoneyRequest: DeclaresMemberRules {
    /// The rules its members follow on the wire (``DeclaresMemberRules``): the server checks them and the OpenAPI
    /// document lists them.
    public static let memberRules: [String: MemberRule] = ["amount": .amount]
}

extension RequestPayment: DeclaresMemberRules {
    /// The rules its members follow on the wire (``DeclaresMemberRules``): the server checks them and the OpenAPI
    /// document lists them.
    public static let memberRules: [String: MemberRule] = ["balance": .kopecks]
}

extension PaymentNote: DeclaresMemberRules {
    /// The rules its members follow on the wire (``DeclaresMemberRules``): the server checks them and the OpenAPI
    /// document lists them.
    public static let memberRules: [String: MemberRule] = ["amount": .kopecks]
}

extension SignatureProfile: DeclaresMemberRules {
    /// The rules its members follow on the wire (``DeclaresMemberRules``): the server checks them and the OpenAPI
    /// document lists them.
    public static let memberRules: [String: MemberRule] = ["photoUrl": .uri]
}
