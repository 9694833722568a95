import FluentKit
import Foundation
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform

/// An address as the audit trail shows it: enough to tell which one it was, not the whole of it
/// ("a…@example.com", "+7…67").
package func maskedForAudit(_ address: String?) -> String {
    guard let address, !address.isEmpty else { return "none" }
    if let at = address.firstIndex(of: "@") { return String(address.prefix(1)) + "…" + address[at...] }
    return String(address.prefix(2)) + "…" + String(address.suffix(2))
}

/// Who is asking, for limits and for the language of what they are sent.
package struct RequestOrigin: Sendable {
    package var ip: String?
    package var language: AppLanguage
    package var device: String?
    /// The request's id (`X-Request-Id`), for the audit trail.
    package var requestID: String?

    package init(ip: String? = nil, language: AppLanguage, device: String? = nil, requestID: String? = nil) {
        self.ip = ip
        self.language = language
        self.device = device
        self.requestID = requestID
    }

    /// As the audit trail keeps it.
    package var audit: AuditOrigin { AuditOrigin(ip: ip, device: device, requestID: requestID) }
}

/// The rules the account services share, and no I/O: identifiers, destinations, tags and
/// locales, what a code request answers. Each service is given these rules and the small
/// capabilities it uses (`AccountStore`, `CodeIssuer`, `ClientBinding`, `AddressProofs`,
/// `PasswordChanges`, `SecurityNotices`, the audit trail), nothing else.
package struct AccountRules: Sendable {
    /// Where a phone written without its country code is (`GATEHOUSE_DEFAULT_COUNTRY_CODE`).
    package let defaultCountryCode: String
    package let limits: GatehouseConfiguration.Limits

    package init(defaultCountryCode: String, limits: GatehouseConfiguration.Limits) {
        self.defaultCountryCode = defaultCountryCode
        self.limits = limits
    }

    // MARK: Identifiers

    package func normalizePhone(_ raw: String) throws -> String {
        guard let phone = PhoneNumber.normalize(raw, defaultCountryCode: defaultCountryCode) else {
            throw GatehouseError.invalid(.invalidPhone, "error.invalidPhone", String(raw.prefix(40))).on(field: "phone")
        }
        return phone
    }

    package func normalizeEmail(_ raw: String) throws -> String {
        guard let email = EmailAddress.normalize(raw) else {
            throw GatehouseError.invalid(.invalidEmail, "error.invalidEmail", String(raw.prefix(80))).on(field: "email")
        }
        return email
    }

    /// What an identifier names: an email (contains `@`), a login/tag (`@handle` as people write
    /// one), or a phone in any common format; nil when it can name nothing.
    package func identifier(_ raw: String) -> Identifier? {
        var identifier = raw.trimmingCharacters(in: .whitespaces)
        // `@handle` is how people write a tag; a tag never contains a second `@`.
        if identifier.hasPrefix("@"), !identifier.dropFirst().contains("@") { identifier.removeFirst() }
        guard !identifier.isEmpty else { return nil }
        if identifier.contains("@") { return EmailAddress.normalize(identifier).map { .email($0) } }
        return .nameOrPhone(name: LoginName.key(identifier), phone: PhoneNumber.normalize(identifier, defaultCountryCode: defaultCountryCode))
    }

    /// An identifier, read (`identifier(_:)`).
    package enum Identifier: Sendable, Equatable {
        case email(String)
        /// A login/tag's key, or else the phone it would be.
        case nameOrPhone(name: String, phone: String?)
    }

    /// Exactly one of an email or a phone.
    package func destination(email: String?, phone: String?) throws -> Destination {
        let email = email.flatMap { $0.trimmingCharacters(in: .whitespaces).isEmpty ? nil : $0 }
        let phone = phone.flatMap { $0.trimmingCharacters(in: .whitespaces).isEmpty ? nil : $0 }
        switch (email, phone) {
        case (let email?, nil): return .email(try normalizeEmail(email))
        case (nil, let phone?): return .phone(try normalizePhone(phone))
        case (nil, nil): throw GatehouseError.invalid(.missingParameter, "error.destinationRequired").on(field: "email")
        case (_?, _?): throw GatehouseError.invalid(.invalidParameter, "error.oneDestination").on(field: "phone")
        }
    }

    package func issued(_ destination: Destination, _ issued: VerificationService.Issued) -> CodeIssued {
        CodeIssued(destination: destination, expiresAt: issued.expiresAt, resendAllowedAt: issued.resendAllowedAt,
                   attemptsAllowed: limits.codeMaxAttempts, codeLength: limits.codeLength, messageID: issued.messageID)
    }

    package func signupPurpose(_ destination: Destination) -> VerificationPurpose {
        if case .phone = destination { return .phoneSignup }
        return .emailSignup
    }

    // MARK: Tags and locales

    package static var tagTaken: GatehouseError { GatehouseError.conflict(.tagTaken, "error.tagTaken").on(field: "tag") }

    /// The tag lower-cased, or `invalid_tag`.
    package func validateTag(_ raw: String) throws -> String {
        guard let tag = TagRule.normalize(raw) else {
            throw GatehouseError.invalid(.invalidTag, "error.invalidTag").on(field: "tag")
        }
        return tag
    }

    /// A locale whose language Gatehouse writes in (`en`, `ru`, `ru-RU`, `en_GB`…), as given.
    package func validateLocale(_ raw: String) throws -> String {
        let locale = raw.trimmingCharacters(in: .whitespaces)
        let wellFormed = locale.count <= 35 && locale.split(separator: "-", omittingEmptySubsequences: false).count <= 4
            && locale.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
        guard wellFormed, AppLanguage(localeIdentifier: locale) != nil else {
            throw GatehouseError.invalid(.invalidLocale, "error.invalidLocale", String(raw.prefix(40))).on(field: "locale")
        }
        return locale
    }

}

/// Which identifiers a login surface takes: any (email, login/tag, phone) or email only
/// (the WebSocket gateway, whose spec identifies customers by email).
package enum LoginIdentifierKinds: Sendable { case any, emailOnly }

/// An email address or a phone, normalised: where a code goes.
package enum Destination: Sendable, Equatable {
    case email(String)
    case phone(String)

    package var value: String {
        switch self {
        case .email(let email): email
        case .phone(let phone): phone
        }
    }

    package var channel: OutgoingMessage.Kind {
        switch self {
        case .email: .email
        case .phone: .sms
        }
    }
}

/// What a code request answers: when the code dies, when another may be asked for.
package struct CodeIssued: Sendable {
    package var destination: Destination
    package var expiresAt: Date
    package var resendAllowedAt: Date
    package var attemptsAllowed: Int
    package var codeLength: Int
    /// The outbox message carrying it (nil when nothing was sent).
    package var messageID: UUID?
}
