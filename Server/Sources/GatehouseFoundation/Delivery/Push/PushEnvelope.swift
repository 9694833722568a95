import Foundation
import GatehouseAPI

/// A push as the outbox keeps it (its `body`): the device to reach and what to show, already in
/// the device's language. Written in the transaction of what caused it; the push channel turns it
/// into an APNs or FCM request.
package struct PushEnvelope: Codable, Sendable, Equatable {
    package var device: UUID
    package var platform: PushPlatform
    package var token: String
    /// APNs: the bundle id (`apns-topic`) and the environment.
    package var topic: String?
    package var environment: APNsEnvironment?
    package var title: String
    package var body: String
    /// Chats with unread messages, shown on the app's icon.
    package var badge: Int?
    /// Groups a chat's notifications (`thread-id`, FCM's `tag`).
    package var thread: String?
    /// A newer push with the same key replaces the older on the device (`apns-collapse-id`, FCM's `collapse_key`).
    package var collapseKey: String?
    /// Our own keys for the app's deep link: `kind` (`message`, `friend_request`, `money`…) and ids.
    package var data: [String: String]

    package init(device: UUID, platform: PushPlatform, token: String, topic: String?, environment: APNsEnvironment?, title: String, body: String,
                 badge: Int?, thread: String?, collapseKey: String?, data: [String: String]) {
        self.device = device
        self.platform = platform
        self.token = token
        self.topic = topic
        self.environment = environment
        self.title = title
        self.body = body
        self.badge = badge
        self.thread = thread
        self.collapseKey = collapseKey
        self.data = data
    }

    package static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()
}
