import Foundation
import GatehouseAPI
import GatehouseKit

/// The Chats tab: my chats, newest activity first, each with the person, the last message, its
/// time and the unread flag; searched by name or tag on the device; deleted after a
/// confirmation (a long press on iOS); "+" picks a friend to write to. Shows the saved list
/// when offline.
@MainActor
public final class ChatsViewModel: MessengerScreenModel<ChatsViewModel.State> {
    /// One chat of the list.
    public struct ChatRow: Equatable, Sendable, Identifiable {
        /// Its id.
        public var id: UUID
        /// The other person.
        public var person: PersonRow
        /// The last message's text ("You: …" for mine, "Photo"/"File" for an attachment alone).
        public var lastMessage: String
        /// Its time: today's time, "Yesterday", a date.
        public var time: String
        /// Whether it holds messages I have not read.
        public var isUnread: Bool
        /// How many of their messages I have not read.
        public var unreadCount: Int
    }

    /// What the screen draws: every title, value and switch of its view.
    public struct State: Equatable, Sendable {
        /// The screen's title.
        public var title: String
        /// What is typed in the search field.
        public var query = ""
        /// The search field's placeholder.
        public var searchPlaceholder: String
        /// The rows, in the order shown.
        public var rows: [ChatRow] = []
        /// "No chats yet…" or "Nobody matches…", when there are no rows.
        public var emptyMessage: String?
        /// A notice over the screen (offline, say); nil when there is none.
        public var notice: String?
        /// The delete question, while shown.
        public var confirmation: Confirmation?
        /// The "new chat" button's title.
        public var newChatTitle: String
        /// The "delete" button's title.
        public var deleteTitle: String
        /// A call is in flight: show progress and keep the buttons off.
        public var isLoading = false
        /// Why the last action failed, in the person's language; nil when nothing failed.
        public var errorMessage: String?
    }

    private var token: ObservationToken?
    private var deleting: UUID?

    init(environment: MessengerEnvironment, repository: MessengerRepository) {
        let l = environment.localizer
        super.init(environment: environment, repository: repository, state: State(title: l("messenger.chats.title"), searchPlaceholder: l("messenger.friends.search"),
                                newChatTitle: l("messenger.chats.new"), deleteTitle: l("messenger.chats.delete")))
        token = repository.observe { [weak self] changes in
            if changes.contains(.chats) || changes.contains(.connectivity) || changes.contains(.account) { self?.rebuild() }
        }
        rebuild()
    }

    private func rebuild() {
        let l = environment.localizer
        let clock = MessengerClock(environment: environment)
        let me = repository.account.id
        update { state in
            let chats = repository.chats
            state.rows = chats.filter { LocalSearch.matches($0.person, state.query) }.map { chat in
                ChatRow(id: chat.id, person: PersonRow(chat.person, environment.localizer), lastMessage: Self.preview(chat.lastMessage, me: me, l),
                        time: chat.lastMessage.map { clock.stamp($0.createdAt) } ?? "", isUnread: chat.unread, unreadCount: chat.unreadCount)
            }
            state.emptyMessage = state.rows.isEmpty ? l(chats.isEmpty ? "messenger.chats.empty" : "messenger.friends.noMatches") : nil
            state.notice = connectivityNotice(repository.connectivity, l)
        }
    }

    static func preview(_ message: Message?, me: UUID, _ l: Localizer) -> String {
        guard let message else { return l("messenger.chats.noMessages") }
        var text: String
        if message.deleted {
            text = l("messenger.message.deleted")
        } else if !message.text.isEmpty {
            text = message.text.split(whereSeparator: \.isNewline).joined(separator: " ")
        } else if let first = message.attachments.first {
            text = l(first.kind == .image ? "messenger.message.photo" : "messenger.message.file")
        } else {
            text = ""
        }
        if message.authorId == me { text = l("messenger.chats.you", text) }
        return text
    }

    /// Filters the list by a person's name or tag as typed.
    public func setQuery(_ query: String) {
        update { $0.query = query }
        rebuild()
    }

    /// A chat tapped.
    public func open(_ id: UUID) {
        guard let chat = repository.chat(id) else { return }
        navigate(.chat(chat))
    }

    /// "+": pick a friend to write to.
    public func newChat() { navigate(.newChat) }

    /// "Delete" (a long press, or a swipe): asks first.
    public func requestDelete(_ id: UUID) {
        guard let chat = repository.chat(id) else { return }
        let l = environment.localizer
        deleting = id
        update {
            $0.confirmation = Confirmation(title: l("messenger.chats.deleteQuestion", PersonRow.name(of: chat.person, environment.localizer)),
                                           message: l("messenger.chats.deleteMessage"), confirmTitle: l("messenger.chats.delete"),
                                           cancelTitle: l("common.cancel"))
        }
    }

    /// Keeps the chat: the deletion question goes.
    public func cancelDelete() {
        deleting = nil
        update { $0.confirmation = nil }
    }

    /// "Delete" on the question: the chat goes from my list (not from theirs).
    public func confirmDelete() async {
        guard let id = deleting else { return }
        deleting = nil
        update { $0.confirmation = nil; $0.isLoading = true; $0.errorMessage = nil }
        do {
            try await repository.deleteChat(id)
            update { $0.isLoading = false }
        } catch {
            update { $0.isLoading = false; $0.errorMessage = environment.message(for: error) }
        }
    }

    /// Pull to refresh.
    public func refresh() async { await repository.refreshChats() }
}
