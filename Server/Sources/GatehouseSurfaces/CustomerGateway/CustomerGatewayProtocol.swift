import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import GatehousePlatform
import Logging

/// Per-connection state the protocol needs: the login attempts this connection may still fail.
/// An attempt reserves a slot before the password is checked and returns it on success, so
/// concurrent requests on one connection cannot exceed the limit.
package final class GatewayConnectionState: @unchecked Sendable {
    private let lock = NSLock()
    private var failuresOrPending = 0

    package func reserveAttempt(limit: Int) -> Bool {
        lock.withLock {
            guard failuresOrPending < limit else { return false }
            failuresOrPending += 1
            return true
        }
    }

    package func releaseAttempt() { lock.withLock { failuresOrPending -= 1 } }
}

/// The gateway's protocol: one text frame in, one text frame out. A thin adapter over
/// `LoginService.login`, the same rule as `POST /api/auth/login`.
/// A class: every connection's session points at the one instance (a copy of the services
/// in each session was 1.3 KiB of every idle connection).
package final class CustomerGatewayProtocol: Sendable {
    package let login: LoginService
    package let settings: GatehouseConfiguration.Gateway
    package let logger: Logger

    package init(login: LoginService, settings: GatehouseConfiguration.Gateway, logger: Logger) {
        self.login = login
        self.settings = settings
        self.logger = logger
    }

    package typealias API = CustomerGatewayAPI
    private static var encoder: JSONEncoder { V1.encoder }

    package struct Failure: Error {
        package var code: String
        package var description: String
        package var inEvent: CustomerInEvent
    }

    /// The answer to one text frame.
    package func respond(to text: String, connection: GatewayConnectionState, ip: String?) async -> String {
        let eventID = Self.newEventID()
        do {
            return try await handle(text, eventID: eventID, connection: connection, ip: ip)
        } catch let failure as Failure {
            return Self.error(failure.code, failure.description, inEvent: failure.inEvent)
        } catch is CancellationError {
            // The connection closed while this request ran (a protocol error, the peer's close):
            // the answer can't be delivered, and it is not a server failure worth an error line.
            logger.debug("gateway: request cancelled: the connection closed")
            return Self.error(API.ErrorCode.serverError, "Internal server error", inEvent: CustomerInEvent(type: nil, eventID: eventID, sequenceID: "", email: nil))
        } catch {
            logger.error("gateway: unexpected error: \(String(describing: error))")
            return Self.error(API.ErrorCode.serverError, "Internal server error", inEvent: CustomerInEvent(type: nil, eventID: eventID, sequenceID: "", email: nil))
        }
    }

    /// The answer to a binary frame: the protocol is JSON text.
    package static func binaryFrameError() -> String {
        error(API.ErrorCode.binaryNotSupported, "Binary frames are not supported; send JSON in text frames",
              inEvent: CustomerInEvent(type: nil, eventID: newEventID(), sequenceID: "", email: nil))
    }

    /// The id of one frame received, echoed as `in_event.event_id`.
    private static func newEventID() -> String { UUID().uuidString.lowercased() }

    private func handle(_ text: String, eventID: String, connection: GatewayConnectionState, ip: String?) async throws -> String {
        guard let root = try? JSONValue.parse(text.utf8), let object = root.object else {
            throw Failure(code: API.ErrorCode.malformedJSON, description: "The message is not a JSON object", inEvent: .init(type: nil, eventID: eventID, sequenceID: "", email: nil))
        }
        let type = object["type"]?.string
        let echoedType = type.map { String($0.prefix(64)) }
        var sequenceID = ""
        switch object["sequence_id"] {
        case .none, .null?: break
        case .string(let s)?: sequenceID = s   // echoed whole: clients match on it (frames are size-limited)
        default:
            throw Failure(code: API.ErrorCode.invalidSequenceID, description: "sequence_id must be a string", inEvent: .init(type: echoedType, eventID: eventID, sequenceID: "", email: nil))
        }
        let data = object["data"]?.object
        let email = data?["email"]?.string.map { String($0.prefix(254)) }
        var inEvent = CustomerInEvent(type: echoedType, eventID: eventID, sequenceID: sequenceID, email: email)
        guard let type, !type.isEmpty else {
            throw Failure(code: API.ErrorCode.missingType, description: "type is missing or empty", inEvent: inEvent)
        }
        guard type == API.MessageType.loginCustomer else {
            throw Failure(code: API.ErrorCode.unknownType, description: "Unknown message type \(type.prefix(64))", inEvent: inEvent)
        }
        guard let email, let password = data?["password"]?.string, !email.isEmpty, !password.isEmpty, password.utf8.count <= 1024 else {
            throw Failure(code: API.ErrorCode.invalidData, description: "data.email and data.password must be non-empty strings", inEvent: inEvent)
        }
        guard !InputText.hasNUL(email), !InputText.hasNUL(password) else {
            throw Failure(code: API.ErrorCode.invalidData, description: "data.email and data.password may not contain U+0000", inEvent: inEvent)
        }
        guard connection.reserveAttempt(limit: settings.failuresPerConnection) else {
            throw Failure(code: API.ErrorCode.tooManyAttempts, description: "Too many failed logins on this connection", inEvent: inEvent)
        }
        let session: IssuedSession
        do {
            session = try await login.login(identifier: email, password: password,
                                               origin: RequestOrigin(ip: ip, language: .en, device: "customer-gateway"), accepting: .emailOnly)
        } catch let error as GatehouseError {
            switch error.kind {
            case .invalidInput where error.code == .invalidCredentials:
                // A failed attempt keeps its reserved slot.
                throw Failure(code: API.ErrorCode.customerNotFound, description: "Customer not found", inEvent: inEvent)
            case .forbidden where error.code == .accountLocked:
                connection.releaseAttempt()   // the password was right
                inEvent.customerID = try? await login.accountID(identifier: email)
                throw Failure(code: API.ErrorCode.accountLocked, description: error.message.render(.en), inEvent: inEvent)
            case .forbidden where error.code == .secondFactorRequired:
                connection.releaseAttempt()   // the password was right; this protocol has no second step
                inEvent.customerID = try? await login.accountID(identifier: email)
                throw Failure(code: API.ErrorCode.secondFactorRequired, description: error.message.render(.en), inEvent: inEvent)
            case .rateLimited(let seconds):
                connection.releaseAttempt()   // refused before any password check
                throw Failure(code: API.ErrorCode.tooManyAttempts, description: "Too many failed logins. Try again in \(seconds) s", inEvent: inEvent)
            default:
                connection.releaseAttempt()
                throw error
            }
        } catch {
            connection.releaseAttempt()
            throw error
        }
        connection.releaseAttempt()
        let answer = CustomerGatewayMessage(
            type: API.MessageType.customerAPIToken, sequenceID: sequenceID,
            data: CustomerAPITokenData(apiToken: session.token, apiTokenExpirationDate: API.expirationString(session.expiresAt))
        )
        return String(decoding: try Self.encoder.encode(answer), as: UTF8.self)
    }

    package static func error(_ code: String, _ description: String, inEvent: CustomerInEvent) -> String {
        let message = CustomerGatewayMessage(
            type: API.MessageType.customerError, sequenceID: inEvent.sequenceID,
            data: CustomerErrorData(errorDescription: description, errorCode: code, inEvent: inEvent, errorUUID: UUID().uuidString.lowercased())
        )
        return (try? encoder.encode(message)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}
