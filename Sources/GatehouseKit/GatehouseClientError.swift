import Foundation
import GatehouseAPI

/// What can go wrong talking to a Gatehouse server, typed so an app can react, with the
/// server's own (localized) message for display.
public enum GatehouseClientError: Error, Equatable, Sendable, LocalizedError {
    /// The server refused the request (HTTP 400) with a message to show and a machine-readable code.
    case rejected(code: GatehouseErrorCode?, message: String)
    /// The session is missing, invalid or expired (HTTP 401): log in again.
    case sessionExpired(message: String?)
    /// A limit was hit (HTTP 429): try again after `retryAfter` seconds.
    case rateLimited(code: GatehouseErrorCode?, message: String, retryAfter: Int?)
    /// The server failed (5xx) or answered something this SDK does not understand.
    case server(status: Int, message: String)
    /// The request never got an answer: no network, timeout, connection refused.
    case transport(String)
    /// An authenticated call was made without a session.
    case notLoggedIn

    /// The machine-readable code, when the server sent one.
    public var code: GatehouseErrorCode? {
        switch self {
        case .rejected(let code, _), .rateLimited(let code, _, _): code
        case .sessionExpired: .unauthorized
        default: nil
        }
    }

    /// The text to show a person: the server's localized message where there is one.
    public var message: String {
        switch self {
        case .rejected(_, let message), .rateLimited(_, let message, _), .server(_, let message): message
        case .sessionExpired(let message): message ?? "Session expired"
        case .transport(let reason): reason
        case .notLoggedIn: "Not logged in"
        }
    }

    /// The message, for `LocalizedError` consumers such as alerts.
    public var errorDescription: String? { message }
}
