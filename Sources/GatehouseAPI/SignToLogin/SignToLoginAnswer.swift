import Foundation

extension SignToLoginAPI {
    /// `res` of every answer: the spec's 0–3 (their meaning depends on the endpoint) and the codes
    /// numbered from 10 for what the spec does not name. A string on the wire, and an open set: a
    /// client takes a code it does not know as an error it cannot name.
    public struct Res: RawRepresentable, Codable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
        /// The code as the wire has it.
        public var rawValue: String
        /// The code of this wire value (an unknown one too).
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The code of this wire value.
        public init(stringLiteral value: String) { self.rawValue = value }
        public var description: String { rawValue }

        public init(from decoder: any Decoder) throws {
            rawValue = try decoder.singleValueContainer().decode(String.self)
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(rawValue)
        }

        /// Done.
        public static let ok: Res = "0"
        /// The API key is unknown or its app disabled; `/opendocument/`: the document changed outside.
        public static let keyRefusedOrDocumentChanged: Res = "1"
        /// `/register/`: not all signatures were valid; elsewhere: the user does not exist.
        public static let signaturesIncompleteOrUnknownUser: Res = "2"
        /// The account has no model for this type of device.
        public static let notEnrolledForDevice: Res = "3"
        /// A parameter is missing or wrong (`error` names it).
        public static let invalidInput: Res = "10"
        /// The body is too large.
        public static let tooLarge: Res = "11"
        /// Too many attempts; `retry_after` says when to try again.
        public static let rateLimited: Res = "12"
        /// A code went to the address: send the request again with `email_code`.
        public static let emailConfirmationRequired: Res = "13"
        /// The email code is wrong or expired.
        public static let invalidEmailCode: Res = "14"
        /// The document was saved from this version already: open it again.
        public static let documentConflict: Res = "15"
        /// No document has this id.
        public static let documentNotFound: Res = "16"
        /// `/authenticate/`: the signature is a copy of one the server has seen (a replay).
        public static let signatureReplayed: Res = "17"
        /// `/savedocument/`: no `sessionid` of the person the email names; sign in again.
        public static let sessionRequired: Res = "18"
        /// `/register/`, `/authenticate/`: the signature was the person's, but an operator locked the account.
        public static let accountLocked: Res = "19"
        /// `/register/`, `/authenticate/`, the profile page: the account asks for a second factor
        /// (an authenticator app), which Sign To Login has no step for; sign in through `/v1`.
        public static let secondFactorRequired: Res = "20"

        /// Every code the server sends.
        public static let known: [Res] = [
            .ok, .keyRefusedOrDocumentChanged, .signaturesIncompleteOrUnknownUser, .notEnrolledForDevice, .invalidInput, .tooLarge,
            .rateLimited, .emailConfirmationRequired, .invalidEmailCode, .documentConflict, .documentNotFound, .signatureReplayed,
            .sessionRequired, .accountLocked, .secondFactorRequired,
        ]
    }
}

/// Every answer of the Sign To Login endpoints: `res` and the members its outcome has, in the order
/// the spec writes them (`res` first; the server keeps this order on the wire). Absent members are
/// left out.
public struct SignToLoginAnswer: Codable, Sendable, Equatable {
    /// The result code.
    public var res: SignToLoginAPI.Res
    /// What went wrong, in English (the spec's texts where it gives them).
    public var error: String?
    /// `res 12`: seconds to wait (also in `Retry-After`).
    public var retryAfter: Int?
    /// `/authenticate/`: how alike the signature is to the model, 0–1 with two decimals.
    public var similarity: Double?
    /// `/authenticate/`: the attempt's id (its photo is at `/signature-photos/{id}`).
    public var signatureid: String?
    /// `/register/`, `/authenticate/`: the person's session, for `/savedocument/`.
    public var sessionid: String?
    /// `/savedocument/`: the saved document's id.
    public var documentid: String?
    /// `/register/` with `res 2`: the counts of the spec, and the token that keeps the accepted signatures.
    public var countRequired: Int?
    /// `/register/`: signatures accepted so far.
    public var countExist: Int?
    /// `/register/`: signatures a model takes.
    public var countModel: Int?
    /// `/register/`: signatures of this request that did not fit.
    public var countIncorrect: Int?
    /// `/register/`'s `res 2`: send it with the missing signatures; the kept ones are this client's only.
    public var enrolmentToken: String?
    /// `/opendocument/`: the document's signings, oldest first.
    public var history: [SignToLoginHistoryEntry]?

    /// Makes one of its members, each as its property describes.
    public init(
        res: SignToLoginAPI.Res, error: String? = nil, retryAfter: Int? = nil, similarity: Double? = nil, signatureid: String? = nil,
        sessionid: String? = nil, documentid: String? = nil, countRequired: Int? = nil, countExist: Int? = nil, countModel: Int? = nil,
        countIncorrect: Int? = nil, enrolmentToken: String? = nil, history: [SignToLoginHistoryEntry]? = nil
    ) {
        self.res = res
        self.error = error
        self.retryAfter = retryAfter
        self.similarity = similarity
        self.signatureid = signatureid
        self.sessionid = sessionid
        self.documentid = documentid
        self.countRequired = countRequired
        self.countExist = countExist
        self.countModel = countModel
        self.countIncorrect = countIncorrect
        self.enrolmentToken = enrolmentToken
        self.history = history
    }

    /// A refusal: its code and message.
    public static func refused(_ res: SignToLoginAPI.Res, _ error: String) -> Self { Self(res: res, error: error) }

    enum CodingKeys: String, CodingKey {
        case res, error
        case retryAfter = "retry_after"
        case similarity, signatureid, sessionid, documentid
        case countRequired = "count_required", countExist = "count_exist", countModel = "count_model", countIncorrect = "count_incorrect"
        case enrolmentToken = "enrolment_token"
        case history
    }
}

/// One signing in a document's history (`/opendocument/`). Every member is written, `null` when empty.
public struct SignToLoginHistoryEntry: Codable, Equatable, Sendable {
    /// Its name.
    public var name: String?
    /// How alike the signature was to the model (0–1).
    public var similarity: Double
    /// Below the server's warning threshold: shown as a low match.
    public var warning: Bool
    /// The server's time of the signing, `DD.MM.YYYY HH:MM:SS` UTC.
    public var time: String
    /// The signer's device time, as sent.
    public var clientTime: String?
    /// Where it was signed, as the app sent it.
    public var location: String?
    /// The country, as the app sent it.
    public var country: String?
    /// The city, as the app sent it.
    public var city: String?
    /// The address, as the app sent it.
    public var address: String?
    /// The photo's URL, when the signer sent one.
    public var photo: String?
    /// The attempt's id.
    public var signatureID: String
    /// The document's hash after this signing.
    public var documentHash: String

    /// Makes one of its members, each as its property describes.
    public init(
        name: String?, similarity: Double, warning: Bool, time: String, clientTime: String?, location: String?, country: String?,
        city: String?, address: String?, photo: String?, signatureID: String, documentHash: String
    ) {
        self.name = name
        self.similarity = similarity
        self.warning = warning
        self.time = time
        self.clientTime = clientTime
        self.location = location
        self.country = country
        self.city = city
        self.address = address
        self.photo = photo
        self.signatureID = signatureID
        self.documentHash = documentHash
    }

    enum CodingKeys: String, CodingKey {
        case name, similarity, warning, time
        case clientTime = "client_time"
        case location, country, city, address, photo
        case signatureID = "signatureid", documentHash = "document_hash"
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(similarity, forKey: .similarity)
        try c.encode(warning, forKey: .warning)
        try c.encode(time, forKey: .time)
        try c.encode(clientTime, forKey: .clientTime)
        try c.encode(location, forKey: .location)
        try c.encode(country, forKey: .country)
        try c.encode(city, forKey: .city)
        try c.encode(address, forKey: .address)
        try c.encode(photo, forKey: .photo)
        try c.encode(signatureID, forKey: .signatureID)
        try c.encode(documentHash, forKey: .documentHash)
    }
}

extension SignToLoginAnswer: DeclaresMemberRules {
    /// The members' rules (the OpenAPI document lists them).
    public static let memberRules: [String: MemberRule] = ["retry_after": .count, "similarity": .fraction]
}
