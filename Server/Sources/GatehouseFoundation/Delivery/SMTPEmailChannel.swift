import Foundation
import Logging
import NIOCore

/// Sends email through a real SMTP server (`SMTPClient`).
package struct SMTPEmailChannel: DeliveryChannel {
    package let client: SMTPClient
    package let from: String
    package let fromName: String
    package var name: String { "smtp" }

    package func deliver(_ message: OutgoingMessage) async throws {
        let mail = EmailMessage(from: from, fromName: fromName, to: message.destination, subject: message.subject ?? "", textBody: message.body)
        do {
            try await client.send(mail)
        } catch let error as SMTPError {
            // Only a refusal of this message is final; configuration and network problems are
            // worth retrying once an operator fixes them.
            if case .unexpectedReply(_, let code, _) = error, code >= 500 { throw DeliveryError.permanent("SMTP: \(error)") }
            throw DeliveryError.transient("SMTP: \(error)")
        } catch {
            throw DeliveryError.transient("SMTP: \(error)")
        }
    }

    package init(client: SMTPClient, from: String, fromName: String) {
        self.client = client
        self.from = from
        self.fromName = fromName
    }
}
