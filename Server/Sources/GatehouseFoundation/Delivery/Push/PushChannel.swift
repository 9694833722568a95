import Foundation
import GatehouseAPI
import Logging

/// The outbox's push lane: reads a `PushEnvelope` and hands it to APNs or FCM. A token its
/// service says is gone removes its device (`onUnregistered`) and ends the message's retries.
package struct PushChannel: DeliveryChannel {
    package let apns: APNsClient?
    package let fcm: FCMClient?
    package let onUnregistered: @Sendable (_ device: UUID, _ token: String) async -> Void
    package var name: String { "push" }

    package init(apns: APNsClient?, fcm: FCMClient?, onUnregistered: @escaping @Sendable (UUID, String) async -> Void) {
        self.apns = apns
        self.fcm = fcm
        self.onUnregistered = onUnregistered
    }

    package func deliver(_ message: OutgoingMessage) async throws {
        guard let push = try? JSONDecoder().decode(PushEnvelope.self, from: Data(message.body.utf8)) else {
            throw DeliveryError.permanent("not a push")
        }
        let outcome: APNsClient.Outcome
        switch push.platform {
        case .apns:
            guard let apns else { throw DeliveryError.permanent("push to APNs is off (no GATEHOUSE_APNS_KEY_FILE)") }
            outcome = try await apns.send(push)
        case .fcm:
            guard let fcm else { throw DeliveryError.permanent("push to FCM is off (no GATEHOUSE_FCM_SERVICE_ACCOUNT_FILE)") }
            outcome = try await fcm.send(push)
        }
        if case .unregistered(let text) = outcome {
            await onUnregistered(push.device, push.token)
            throw DeliveryError.permanent(text + ": the device is removed")
        }
    }
}
