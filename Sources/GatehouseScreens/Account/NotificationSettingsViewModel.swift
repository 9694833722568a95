import Foundation
import GatehouseAPI
import GatehouseKit

/// "Notifications" (docs/push.md): whether a message's push shows its sender and text, and the
/// chats muted, each with until when and an "Unmute". A chat is muted from its own screen
/// (``mute(_:until:)``); nothing here is kept on the device: the server decides what it pushes.
@MainActor
public final class NotificationSettingsViewModel: ScreenModel<NotificationSettingsViewModel.State> {
    /// A chat whose pushes are muted, and until when.
    public struct MutedChat: Equatable, Sendable {
        /// Its id.
        public var id: UUID
        /// The name shown.
        public var name: String
        /// "until 27.11.2026 18:00", or "until you unmute it".
        public var until: String
    }

    /// What the screen draws: every title, value and switch of its view.
    public struct State: Equatable, Sendable {
        /// The screen's title.
        public var title: String
        /// The previews section's title.
        public var previewsTitle: String
        /// The explanation under previews.
        public var previewsHint: String
        /// The switch: on (the default) shows the sender and the text.
        public var previews = true
        /// The muted section's title.
        public var mutedTitle: String
        /// The muted chats, with the "Unmute" button of each.
        public var muted: [MutedChat] = []
        /// Shown when no chat is muted.
        public var noneMuted: String
        /// The "unmute" button's title.
        public var unmuteTitle: String
        /// A call is in flight: show progress and keep the buttons off.
        public var isLoading = false
        /// Why the last action failed, in the person's language; nil when nothing failed.
        public var errorMessage: String?
    }

    private let localizer: Localizer
    private let timeZone: TimeZone
    private let accounts: AccountsClient
    private let messenger: MessengerClient
    private let messageForError: (any Error) -> String?

    /// The screen on the person's clients, in `localizer`'s words, times in `timeZone`.
    public init(localizer: Localizer, timeZone: TimeZone = .current, accounts: AccountsClient, messenger: MessengerClient,
                message: @escaping (any Error) -> String?) {
        self.localizer = localizer
        self.timeZone = timeZone
        self.accounts = accounts
        self.messenger = messenger
        self.messageForError = message
        let l = localizer
        super.init(state: State(title: l("push.settings.title"), previewsTitle: l("push.settings.previews"), previewsHint: l("push.settings.previewsHint"),
                                mutedTitle: l("push.settings.muted"), noneMuted: l("push.settings.noneMuted"), unmuteTitle: l("push.settings.unmute")))
    }

    /// Reads the settings and the muted chats (up to the 200 most recent chats).
    public func load() async {
        update { $0.isLoading = true; $0.errorMessage = nil }
        do {
            let settings = try await accounts.notificationSettings()
            let chats = try await messenger.chats(limit: 200).items
            let muted = chats.filter { ($0.mutedUntil ?? .distantPast) > Date() }.map(mutedChat)
            update { $0.isLoading = false; $0.previews = settings.previews; $0.muted = muted }
        } catch {
            update { $0.isLoading = false; $0.errorMessage = messageForError(error) }
        }
    }

    /// The switch: saved at once; on failure it goes back and says why.
    public func setPreviews(_ on: Bool) async {
        let before = state.previews
        update { $0.previews = on; $0.errorMessage = nil }
        do {
            let saved = try await accounts.updateNotificationSettings(NotificationSettingsUpdate(previews: on))
            update { $0.previews = saved.previews }
        } catch {
            update { $0.previews = before; $0.errorMessage = messageForError(error) }
        }
    }

    /// Mutes a chat until a time (a chat's screen offers an hour, a day, a week, or for good:
    /// `until` far ahead), and lists it here.
    public func mute(_ chat: UUID, until: Date) async {
        do {
            let muted = mutedChat(try await messenger.mute(chat, until: until))
            update { $0.muted = $0.muted.filter { $0.id != chat } + [muted]; $0.errorMessage = nil }
        } catch {
            update { $0.errorMessage = messageForError(error) }
        }
    }

    /// "Unmute": the chat pushes again.
    public func unmute(_ chat: UUID) async {
        do {
            _ = try await messenger.mute(chat, until: nil)
            update { $0.muted = $0.muted.filter { $0.id != chat }; $0.errorMessage = nil }
        } catch {
            update { $0.errorMessage = messageForError(error) }
        }
    }

    private func mutedChat(_ chat: Chat) -> MutedChat {
        let name = [chat.person.firstName, chat.person.lastName].compactMap { $0 }.joined(separator: " ")
        let until = chat.mutedUntil ?? .distantFuture
        let text = until.timeIntervalSinceNow > 5 * 365 * 86_400 ? localizer("push.settings.forever") : localizer("push.settings.until", Self.moment(until, timeZone))
        return MutedChat(id: chat.id, name: name.isEmpty ? "@" + chat.person.tag : name, until: text)
    }

    static func moment(_ date: Date, _ timeZone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let c = calendar.dateComponents([.day, .month, .year, .hour, .minute], from: date)
        return String(format: "%02d.%02d.%04d %02d:%02d", c.day ?? 0, c.month ?? 0, c.year ?? 0, c.hour ?? 0, c.minute ?? 0)
    }
}
