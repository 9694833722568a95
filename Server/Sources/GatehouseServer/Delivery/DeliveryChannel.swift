import Foundation
import Logging

/// Delivers one outbox message. Throwing `DeliveryError.permanent` stops the retries.
protocol DeliveryChannel: Sendable {
    var name: String { get }
    func deliver(_ message: OutgoingMessage) async throws
}

enum DeliveryError: Error, CustomStringConvertible {
    /// The receiver refused the message for good (a bad address, a rejected number).
    case permanent(String)
    /// Worth another try later (network, timeouts, 5xx, 4xx SMTP replies).
    case transient(String)

    var description: String {
        switch self {
        case .permanent(let m): "permanent: \(m)"
        case .transient(let m): "transient: \(m)"
        }
    }
}

/// The development channel: the message stays in the outbox, readable with `gatehouse outbox`
/// and `GET /dev/outbox`. Only the envelope is logged; the text (and its code) never is.
struct DevDeliveryChannel: DeliveryChannel {
    let logger: Logger
    var name: String { "dev" }

    func deliver(_ message: OutgoingMessage) async throws {
        logger.info("dev delivery: \(message.kind.rawValue) to \(message.destination) kept in the outbox; read it with `\(ServerCommands.invocation) outbox --to \(message.destination)` or GET /dev/outbox?to=\(message.destination)")
    }
}
