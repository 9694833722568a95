import Foundation

// What the members of `/v1`'s wire types take beyond their Swift types (``MemberRule``), by their names on the
// wire, side by side: the API document is built with these (each rule says which check of the server it stands for).

extension Problem: DeclaresMemberRules {
    public static let memberRules: [String: MemberRule] = ["status": .httpStatus, "attemptsLeft": .count, "retryAfter": .count]
}

extension CodeRequest: DeclaresMemberRules {
    public static let memberRules: [String: MemberRule] = ["email": .email, "phone": .phone]
}

extension CodeSent: DeclaresMemberRules {
    public static let memberRules: [String: MemberRule] = ["attemptsAllowed": .count, "codeLength": .minimum(1)]
}

extension SignupRequest: DeclaresMemberRules {
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
    public static let memberRules: [String: MemberRule] = ["birthday": .date, "avatarUrl": .uri]
}

extension RecoveryRequest: DeclaresMemberRules {
    public static let memberRules: [String: MemberRule] = ["email": .email, "phone": .phone, "code": .code, "password": .newPassword]
}

extension ProfileUpdate: DeclaresMemberRules {
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
    public static let memberRules: [String: MemberRule] = ["currentPassword": .typed, "newPassword": .newPassword]
}

extension EmailChangeRequest: DeclaresMemberRules {
    public static let memberRules: [String: MemberRule] = ["currentPassword": .typed, "email": .email]
}

extension PhoneVerificationRequest: DeclaresMemberRules {
    public static let memberRules: [String: MemberRule] = ["currentPassword": .typed, "phone": .phone]
}

extension CodeVerification: DeclaresMemberRules {
    public static let memberRules: [String: MemberRule] = ["phone": .phone, "code": .code]
}

extension LoginRequest: DeclaresMemberRules {
    public static let memberRules: [String: MemberRule] = ["identifier": .typed, "password": .typed, "device": .text]
}

extension AuthSession: DeclaresMemberRules {
    public static let memberRules: [String: MemberRule] = ["tokenType": .constant("Bearer")]
}

extension SessionsRevoked: DeclaresMemberRules {
    public static let memberRules: [String: MemberRule] = ["revoked": .count]
}

extension Person: DeclaresMemberRules {
    public static let memberRules: [String: MemberRule] = ["avatarUrl": .uri]
}

extension Attachment: DeclaresMemberRules {
    public static let memberRules: [String: MemberRule] = ["url": .uri]
}

extension DeveloperApp: DeclaresMemberRules {
    public static let memberRules: [String: MemberRule] = ["email": .emailShown, "website": .uri, "iconUrl": .uri]
}

extension NewApp: DeclaresMemberRules {
    public static let memberRules: [String: MemberRule] = ["name": .text(max: 100), "bundleId": .text(max: 155), "email": .emailShown, "website": .uri]
}

extension AppUpdate: DeclaresMemberRules {
    public static let memberRules: [String: MemberRule] = ["name": .text(max: 100), "email": .emailShown, "minSimilarity": .fraction]
}

extension WalletInfo: DeclaresMemberRules {
    public static let memberRules: [String: MemberRule] = ["currency": .choice(["RUB"]), "balance": .balance]
}

extension WalletParty: DeclaresMemberRules {
    public static let memberRules: [String: MemberRule] = ["avatarUrl": .uri]
}

extension NewTransfer: DeclaresMemberRules {
    public static let memberRules: [String: MemberRule] = ["amount": .amount]
}

extension Transfer: DeclaresMemberRules {
    public static let memberRules: [String: MemberRule] = ["amount": .amount]
}

extension TransferResult: DeclaresMemberRules {
    public static let memberRules: [String: MemberRule] = ["balance": .kopecks]
}

extension NewTopUp: DeclaresMemberRules {
    public static let memberRules: [String: MemberRule] = ["amount": .amount]
}

extension TopUp: DeclaresMemberRules {
    public static let memberRules: [String: MemberRule] = ["amount": .amount, "confirmationUrl": .uri, "refunded": .kopecks]
}

extension WalletTransaction: DeclaresMemberRules {
    public static let memberRules: [String: MemberRule] = ["amount": .kopecks, "balanceAfter": .kopecks]
}

extension NewMoneyRequest: DeclaresMemberRules {
    public static let memberRules: [String: MemberRule] = ["amount": .amount]
}

extension MoneyRequest: DeclaresMemberRules {
    public static let memberRules: [String: MemberRule] = ["amount": .amount]
}

extension RequestPayment: DeclaresMemberRules {
    public static let memberRules: [String: MemberRule] = ["balance": .kopecks]
}

extension PaymentNote: DeclaresMemberRules {
    public static let memberRules: [String: MemberRule] = ["amount": .kopecks]
}

extension SignatureProfile: DeclaresMemberRules {
    public static let memberRules: [String: MemberRule] = ["photoUrl": .uri]
}
