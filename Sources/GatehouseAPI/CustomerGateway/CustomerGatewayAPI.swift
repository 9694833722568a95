import Foundation

/// The WebSocket login gateway of `docs/websocket-login.md`. The spec's text has typos
/// (`sequence id`, `LOGIN CUSTOMER`, `api token`); these are the canonical, underscored names of
/// its error sample, which real clients send.
public enum CustomerGatewayAPI {
    /// The gateway's WebSocket path.
    public static let path = "/customer-gateway/customer"

    /// The frames' `type` values.
    public enum MessageType {
        /// The client's login frame.
        public static let loginCustomer = "LOGIN_CUSTOMER"
        /// The answer to a login: a token.
        public static let customerAPIToken = "CUSTOMER_API_TOKEN"
        /// A refusal.
        public static let customerError = "CUSTOMER_ERROR"
    }

    /// `error_code` values. Stable: clients match on them.
    public enum ErrorCode {
        /// Unknown email or wrong password (the same answer for both).
        public static let customerNotFound = "customer.notFound"
        /// Too many failed logins for this connection, address or account.
        public static let tooManyAttempts = "customer.tooManyAttempts"
        /// The password was right, but an operator locked the account.
        public static let accountLocked = "customer.accountLocked"
        /// The password was right, but the account asks for a second factor, which this protocol
        /// has no step for: sign in through `/v1` (`POST /v1/sessions`, then the code).
        public static let secondFactorRequired = "customer.secondFactorRequired"
        /// The text frame is not a JSON object.
        public static let malformedJSON = "request.malformedJson"
        /// `type` is missing, empty or not a string.
        public static let missingType = "request.missingType"
        /// `type` names no message this gateway handles.
        public static let unknownType = "request.unknownType"
        /// `sequence_id` is present but not a string.
        public static let invalidSequenceID = "request.invalidSequenceId"
        /// `data` is missing, or its fields are missing or of the wrong type.
        public static let invalidData = "request.invalidData"
        /// A binary frame: the protocol is JSON in text frames.
        public static let binaryNotSupported = "request.binaryNotSupported"
        /// The server failed; try again.
        public static let serverError = "server.error"
    }

    /// `yyyy-MM-dd'T'HH:mm:ss'Z'` in UTC, as the spec's `api_token_expiration_date`.
    public static func expirationString(_ date: Date) -> String { WireDates.iso8601String(from: date) }
}

/// `CUSTOMER_API_TOKEN`'s `data`.
public struct CustomerAPITokenData: Codable, Sendable, Equatable {
    /// The token the login answered (the spec's `api_token`).
    public var apiToken: String
    /// When it stops working, as the spec writes dates.
    public var apiTokenExpirationDate: String

    /// Makes one of its members, each as its property describes.
    public init(apiToken: String, apiTokenExpirationDate: String) {
        self.apiToken = apiToken
        self.apiTokenExpirationDate = apiTokenExpirationDate
    }

    enum CodingKeys: String, CodingKey {
        case apiToken = "api_token"
        case apiTokenExpirationDate = "api_token_expiration_date"
    }
}

/// `CUSTOMER_ERROR`'s `in_event`: the request as received, never its password.
public struct CustomerInEvent: Codable, Sendable, Equatable {
    /// Its kind.
    public var type: String?
    /// The server's id of the frame it answers (a UUID, new for every frame received); nil from a server before 1.2.
    public var eventID: String?
    /// The `sequence_id` of the frame it answers.
    public var sequenceID: String
    /// The account's id, once the server knows whose it is: only after the right password (an account locked, or
    /// one whose authenticator app this protocol cannot ask for). A wrong password or an unknown email has none, so the
    /// answer never tells whether an account exists.
    public var customerID: String?
    /// The email address.
    public var email: String?

    /// Makes one of its members, each as its property describes.
    public init(type: String?, eventID: String? = nil, sequenceID: String, customerID: String? = nil, email: String?) {
        self.type = type
        self.eventID = eventID
        self.sequenceID = sequenceID
        self.customerID = customerID
        self.email = email
    }

    enum CodingKeys: String, CodingKey {
        case type
        case eventID = "event_id"
        case sequenceID = "sequence_id"
        case customerID = "customer_id"
        case email
    }
}

/// `CUSTOMER_ERROR`'s `data`.
public struct CustomerErrorData: Codable, Sendable, Equatable {
    /// What went wrong, in words.
    public var errorDescription: String
    /// The stable code (`customer.notFound`, …).
    public var errorCode: String
    /// The frame the error answers, as the spec echoes it.
    public var inEvent: CustomerInEvent
    /// The error's own id (a UUID).
    public var errorUUID: String

    /// Makes one of its members, each as its property describes.
    public init(errorDescription: String, errorCode: String, inEvent: CustomerInEvent, errorUUID: String) {
        self.errorDescription = errorDescription
        self.errorCode = errorCode
        self.inEvent = inEvent
        self.errorUUID = errorUUID
    }

    enum CodingKeys: String, CodingKey {
        case errorDescription = "error_description"
        case errorCode = "error_code"
        case inEvent = "in_event"
        case errorUUID = "error_uuid"
    }
}

/// A gateway message: `{"type": …, "sequence_id": …, "data": {…}}`.
public struct CustomerGatewayMessage<Payload: Codable & Sendable>: Codable, Sendable {
    /// Its kind.
    public var type: String
    /// The frame's `sequence_id`: an answer carries the one of the frame it answers.
    public var sequenceID: String
    /// The frame's `data`.
    public var data: Payload

    /// Makes one of its members, each as its property describes.
    public init(type: String, sequenceID: String, data: Payload) {
        self.type = type
        self.sequenceID = sequenceID
        self.data = data
    }

    enum CodingKeys: String, CodingKey {
        case type
        case sequenceID = "sequence_id"
        case data
    }
}

/// `LOGIN_CUSTOMER`'s `data`.
public struct LoginCustomerData: Codable, Sendable, Equatable {
    /// The email address.
    public var email: String
    /// The password.
    public var password: String

    /// Makes one of its members, each as its property describes.
    public init(email: String, password: String) {
        self.email = email
        self.password = password
    }
}
