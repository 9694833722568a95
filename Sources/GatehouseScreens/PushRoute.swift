import Foundation

/// Where opening a push takes the person (docs/push.md, "What is pushed"): read from the
/// notification's `userInfo` (APNs: the payload's keys beside `aps`; FCM: its `data`). The app's
/// coordinator shows the screen: the chat, the friend requests, the wallet's movement or request.
public enum PushRoute: Equatable, Sendable {
    /// A message: its chat (and the message, to scroll to).
    case chat(UUID, message: UUID?)
    /// A friend request, or its acceptance: the person.
    case friends(person: UUID)
    /// Money received: the transfer in the wallet's history.
    case walletTransfer(UUID)
    /// A money request asked or answered.
    case moneyRequest(UUID)

    /// The route of a notification's `userInfo`, or nil for one that is not ours.
    public init?(userInfo: [AnyHashable: Any]) {
        func id(_ key: String) -> UUID? { (userInfo[key] as? String).flatMap(UUID.init(uuidString:)) }
        switch userInfo["kind"] as? String {
        case "message":
            guard let chat = id("chat") else { return nil }
            self = .chat(chat, message: id("message"))
        case "friend_request", "friend_accepted":
            guard let person = id("person") else { return nil }
            self = .friends(person: person)
        case "money":
            guard let transfer = id("transfer") else { return nil }
            self = .walletTransfer(transfer)
        case "money_request":
            guard let request = id("request") else { return nil }
            self = .moneyRequest(request)
        default:
            return nil
        }
    }
}
