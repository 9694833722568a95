import Foundation
import GatehouseFoundation
import GatehousePlatform

/// The messenger, built from the platform pieces it uses (docs/architecture.md, "A new app"): each
/// of its services is given what it uses and nothing else, and the composition root wires the
/// module, not its services one by one.
package struct MessengerModule: Sendable {
    package let people: PeopleService
    package let friends: FriendsService
    package let chats: ChatsService
    package let messages: MessagesService
    package let attachments: AttachmentService
    /// How the wallet puts a payment into a chat.
    package let payments: PaymentMessages
    /// Its queries (its part in deleting an account uses them).
    package let store: MessengerStore

    package static func make(database: DatabaseProvider, clock: GatehouseClock, settings: GatehouseConfiguration.Messenger, publicURL: String,
                             rateLimiter: RateLimiter, blobs: any BlobStore, events: EventLog, people: PersonLoader) -> MessengerModule {
        let reader = MessageReader(publicURL: publicURL)
        let store = MessengerStore(database: database, reader: reader)
        let writer = MessageWriter(database: database, clock: clock, settings: settings, rateLimiter: rateLimiter, events: events, people: people,
                                   store: store)
        return MessengerModule(
            people: PeopleService(clock: clock, settings: settings, people: people, store: store),
            friends: FriendsService(clock: clock, settings: settings, rateLimiter: rateLimiter, events: events, people: people, store: store),
            chats: ChatsService(database: database, clock: clock, settings: settings, events: events, people: people, reader: reader, store: store),
            messages: MessagesService(clock: clock, settings: settings, rateLimiter: rateLimiter, events: events, people: people, store: store,
                                      writer: writer),
            attachments: AttachmentService(clock: clock, settings: settings, publicURL: publicURL, rateLimiter: rateLimiter, blobs: blobs,
                                           people: people, reader: reader, store: store),
            payments: PaymentMessages(clock: clock, settings: settings, events: events, people: people, store: store),
            store: store)
    }
}
