import Foundation
import Logging

/// Delivers one outbox message. Throwing `DeliveryError.permanent` stops the retries.
package protocol DeliveryChannel: Sendable {
    var name: String { get }
    func deliver(_ message: OutgoingMessage) async throws
}

package enum DeliveryError: Error, CustomStringConvertible {
    /// The receiver refused the message for good (a bad address, a rejected number).
    case permanent(String)
    /// Worth another try later (network, timeouts, 5xx, 4xx SMTP replies).
    case transient(String)
    /// Worth another try, not before `after` seconds (a `Retry-After`, a credentials alarm).
    case later(String, after: TimeInterval)

    package var description: String {
        switch self {
        case .permanent(let m): "permanent: \(m)"
        case .transient(let m): "transient: \(m)"
        case .later(let m, let after): "transient: \(m) (retry after \(Int(after)) s)"
        }
    }
}

extension DeliveryError {
    /// A refusal worth another try (429, 5xx): not before the service's `Retry-After` (seconds)
    /// when it gave one, else on the outbox's backoff.
    package static func retry(_ text: String, retryAfter header: String?) -> DeliveryError {
        header.flatMap { TimeInterval($0.trimmingCharacters(in: .whitespaces)) }.map { .later(text, after: $0) } ?? .transient(text)
    }
}

/// The development channel: the message stays in the outbox, readable with `gatehouse outbox`
/// and `GET /dev/outbox`. Only the envelope is logged; the text (and its code) never is.
package struct DevDeliveryChannel: DeliveryChannel {
    package let logger: Logger
    package var name: String { "dev" }

    package func deliver(_ message: OutgoingMessage) async throws {
        logger.info("dev delivery: \(message.kind.rawValue) to \(message.destination) kept in the outbox; read it with `\(GatehouseInvocation.current) outbox --to \(message.destination)` or GET /dev/outbox?to=\(message.destination)")
    }

    package init(logger: Logger) {
        self.logger = logger
    }
}
