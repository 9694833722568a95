import Foundation
import GatehouseAPI
import GatehouseKit

/// One chat: the history with day separators (paging back), mine on one side and theirs on the
/// other, each message's time, edit mark, quote, forward origin and delivery (sending, not sent,
/// read); the composer that sends, replies or edits; the menu of a message (reply, edit mine
/// within the window, delete for me or for everyone, forward, retry or discard a failed one);
/// the header with the other person, which opens their profile with the chat's attachments.
/// Live: realtime events land here as they come; offline, what is written waits as pending.
@MainActor
public final class ChatViewModel: MessengerScreenModel<ChatViewModel.State> {
    /// A quoted message (a reply's).
    public struct Quote: Equatable, Sendable {
        /// Who wrote the quoted message ("You" for me).
        public var author: String
        /// The quoted text, as it was when quoted.
        public var text: String
    }

    /// Where a message stands: sent, read by the other person, waiting for the network, or refused (with why).
    public enum Delivery: Equatable, Sendable {
        /// The server has it.
        case sent
        /// The other person has read it (mine only).
        case read
        /// Waiting to reach the server (no network, or on its way).
        case pending
        /// The server refused it: why; retry or discard it.
        case failed(reason: String)
    }

    /// One message as drawn.
    public struct MessageRow: Equatable, Sendable, Identifiable {
        /// Its id.
        public var id: UUID
        /// The text; "Message deleted" for a deleted one.
        public var text: String
        /// When it was written ("14:05").
        public var time: String
        /// Mine: drawn on the trailing side.
        public var isMine: Bool
        /// Whether the text was edited (shown "edited").
        public var isEdited: Bool
        /// Whether it was deleted for everyone (its text is the "deleted" line).
        public var isDeleted: Bool
        /// The message it replies to, if any.
        public var quote: Quote?
        /// "Forwarded from Ann".
        public var forwardedFrom: String?
        /// The attachments' file names.
        public var attachments: [String]
        /// How far the attachments of my pending message have uploaded (0–1); nil when not uploading.
        public var uploadProgress: Double?
        /// "Uploading 45%", while uploading.
        public var uploadText: String?
        /// Where it stands with the server (mine: sent, read, pending or failed).
        public var delivery: Delivery
        /// "Sending…", "Not sent: …", "Read"; nil for a plain sent message.
        public var deliveryText: String?
    }

    /// A row of the chat: a day's separator or a message.
    public enum Item: Equatable, Sendable, Identifiable {
        /// A day's separator ("Today", "12 March").
        case day(String)
        /// A message.
        case message(MessageRow)

        /// Its id.
        public var id: String {
            switch self {
            case .day(let title): "day:" + title
            case .message(let row): row.id.uuidString
            }
        }
    }

    /// What "Send" does: a new message, a reply (with the quote), or an edit of one of mine.
    public enum Composer: Equatable, Sendable {
        /// A new message.
        case new
        /// A reply to a message, with its quote.
        case reply(to: UUID, Quote)
        /// A new text for one of my messages.
        case edit(UUID)
    }

    /// What a message's menu offers.
    public enum MessageAction: String, CaseIterable, Equatable, Sendable {
        /// Reply with a quote.
        case reply
        /// Change my message's text.
        case edit
        /// Hide it from me.
        case deleteForMe
        /// Delete my message for everyone.
        case deleteForEveryone
        /// Forward it to other chats.
        case forward
        /// Send a refused change again.
        case retry
        /// Give a refused or waiting change up.
        case discard
    }

    /// One entry of a message's menu.
    public struct ActionItem: Equatable, Sendable {
        /// What it does.
        public var action: MessageAction
        /// The screen's title.
        public var title: String
        /// Whether it destroys something (drawn red).
        public var isDestructive: Bool
    }

    /// A file picked for the next message.
    public struct DraftFile: Equatable, Sendable, Identifiable {
        /// Its id.
        public var id: UUID
        /// The file's name.
        public var fileName: String
        /// "12 KB", for the composer's chip.
        public var size: String
        /// Whether it is an image (shown as a picture).
        public var isImage: Bool
    }

    /// What the screen draws: every title, value and switch of its view.
    public struct State: Equatable, Sendable {
        /// The other person's name (the header; tapping it opens their profile).
        public var title: String
        /// The other person (the header).
        public var person: PersonRow
        /// The connection line; nil when online.
        public var notice: String?
        /// Oldest first.
        public var items: [Item] = []
        /// "No messages yet. Say hello!"
        public var emptyMessage: String?
        /// Whether older messages can be read (a "load older" row or pull).
        public var canLoadOlder = false
        /// Whether an older page is being read.
        public var isLoadingOlder = false
        /// The text being written.
        public var draft = ""
        /// The text field's placeholder.
        public var placeholder: String
        /// What "Send" does now.
        public var composer: Composer = .new
        /// "Reply to Ann" / "Editing"; nil for a new message.
        public var composerTitle: String?
        /// The "send" button's title.
        public var sendTitle: String
        /// Whether "send" works now.
        public var isSendEnabled = false
        /// Files picked for the next message (the app's picker gives the bytes, a name and a type).
        public var draftFiles: [DraftFile] = []
        /// "Attach": usable for a new message or a reply (not while editing), up to the per-message limit.
        public var attachTitle: String
        /// Whether "attach" works now.
        public var isAttachEnabled = true
        /// The message whose menu is open, and the menu.
        public var selected: UUID?
        /// The open message menu's entries (empty when no message is selected).
        public var actions: [ActionItem] = []
        /// Why the last action failed, in the person's language; nil when nothing failed.
        public var errorMessage: String?
    }

    /// The chat's id.
    public let chatId: UUID
    private var chat: Chat
    private var token: ObservationToken?
    private var messages: [LocalMessage] = []
    private var isVisible = false

    init(environment: MessengerEnvironment, repository: MessengerRepository, chat: Chat) {
        self.chat = chat
        self.chatId = chat.id
        let l = environment.localizer
        super.init(environment: environment, repository: repository, state: State(title: PersonRow.name(of: chat.person, environment.localizer), person: PersonRow(chat.person, environment.localizer),
                                placeholder: l("messenger.chat.placeholder"), sendTitle: l("messenger.chat.send"), attachTitle: l("messenger.chat.attach")))
        token = repository.observe { [weak self] changes in
            guard let self else { return }
            if changes.contains(.messages(chatId)) || changes.contains(.chats) || changes.contains(.connectivity) {
                rebuild()
                if isVisible, changes.contains(.messages(chatId)) { Task { await self.repository.markRead(self.chatId) } }
            }
            if changes.contains(.chats), repository.chat(chatId) == nil, isVisible {
                // Deleted (here or on another device): leave it.
                isVisible = false
                navigate(.back)
            }
        }
        rebuild()
    }

    /// The screen appeared: the newest messages are read from the server and marked read.
    public func appear() async {
        isVisible = true
        rebuild()
        await repository.loadNewest(in: chatId)
        await repository.markRead(chatId)
    }

    /// The screen went away (no more marking read).
    public func disappear() { isVisible = false }

    private func rebuild() {
        let l = environment.localizer
        let clock = MessengerClock(environment: environment)
        if let current = repository.chat(chatId) { chat = current }
        messages = repository.messages(in: chatId)
        let me = repository.account.id
        let readUpTo = chat.otherLastReadMessageId.flatMap { id in messages.first { $0.id == id }?.message.createdAt }
        var items: [Item] = []
        var lastDay: Date?
        for local in messages {
            let message = local.message
            if lastDay.map({ !clock.sameDay($0, message.createdAt) }) ?? true {
                items.append(.day(clock.day(message.createdAt)))
                lastDay = message.createdAt
            }
            items.append(.message(row(local, me: me, readUpTo: readUpTo, clock: clock, l)))
        }
        update { state in
            state.title = PersonRow.name(of: chat.person, environment.localizer)
            state.person = PersonRow(chat.person, environment.localizer)
            state.items = items
            state.emptyMessage = items.isEmpty ? l("messenger.chat.empty") : nil
            state.canLoadOlder = repository.hasOlderMessages(in: chatId) && !messages.isEmpty
            state.notice = connectivityNotice(repository.connectivity, l)
            if let selected = state.selected, let local = messages.first(where: { $0.id == selected }) {
                state.actions = actions(for: local, me: me)
            } else {
                state.selected = nil
                state.actions = []
            }
            state.isSendEnabled = Self.canSend(state.draft, files: files)
        }
    }

    private static func canSend(_ draft: String, files: [OutboxFile]) -> Bool {
        !draft.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty || !files.isEmpty
    }

    private func row(_ local: LocalMessage, me: UUID, readUpTo: Date?, clock: MessengerClock, _ l: Localizer) -> MessageRow {
        let message = local.message
        let mine = message.authorId == me
        let delivery: Delivery
        var deliveryText: String?
        switch local.delivery {
        case .sent:
            delivery = mine && readUpTo.map { message.createdAt <= $0 } == true ? .read : .sent
            if delivery == .read { deliveryText = l("messenger.chat.read") }
        case .pending(let change):
            delivery = .pending
            deliveryText = l("messenger.chat.pending.\(change.rawValue)")
        case .failed(let change, let reason):
            delivery = .failed(reason: reason)
            deliveryText = l("messenger.chat.failed.\(change.rawValue)", reason)
        }
        let progress = local.delivery == .pending(.send) ? repository.uploads[message.id] : nil
        return MessageRow(
            id: message.id, text: message.deleted ? l("messenger.message.deleted") : paymentLine(message, me: me) ?? message.text, time: clock.time(message.createdAt),
            isMine: mine, isEdited: message.editedAt != nil && !message.deleted, isDeleted: message.deleted,
            quote: message.replyTo.map { Quote(author: author($0.authorId, me: me), text: $0.deleted ? l("messenger.message.deleted") : ($0.excerpt ?? "")) },
            forwardedFrom: message.forwardedFrom.map { l("messenger.chat.forwardedFrom", author($0.authorId, me: me)) },
            attachments: message.attachments.map(\.fileName), uploadProgress: progress,
            uploadText: progress.map { l("messenger.chat.uploading", String(Int(($0 * 100).rounded(.down)))) }, delivery: delivery, deliveryText: deliveryText)
    }

    /// A wallet message as the wallet's screens write it ("You sent 250.50 ₽ · concert").
    private func paymentLine(_ message: Message, me: UUID) -> String? {
        guard let note = message.payment else { return nil }
        let line = WalletFormat.note(note, mine: message.authorId == me, other: PersonRow.name(of: chat.person, environment.localizer), environment.localizer)
        return message.text.isEmpty ? line : line + " · " + message.text
    }

    private func author(_ id: UUID, me: UUID) -> String {
        if id == me { return environment.localizer("messenger.chat.you") }
        if id == chat.person.id { return PersonRow.name(of: chat.person, environment.localizer) }
        return repository.cachedPerson(id).map { PersonRow.name(of: $0, environment.localizer) } ?? environment.localizer("messenger.chat.someone")
    }

    private func actions(for local: LocalMessage, me: UUID) -> [ActionItem] {
        let l = environment.localizer
        let message = local.message
        let mine = message.authorId == me
        var list: [MessageAction] = []
        switch local.delivery {
        case .failed:
            list = [.retry, .discard]
        case .pending(.send):
            list = [.edit, .discard]
        case .pending:
            list = []
        case .sent:
            guard !message.deleted else { return [] }
            // A wallet message records a payment: reply to it or hide it from me, nothing more (the server refuses the rest).
            guard message.payment == nil else { list = [.reply, .deleteForMe]; break }
            list = [.reply]
            if mine && environment.now().timeIntervalSince(message.createdAt) < environment.editWindow && !message.text.isEmpty { list.append(.edit) }
            list.append(.forward)
            list.append(.deleteForMe)
            if mine { list.append(.deleteForEveryone) }
        }
        return list.map { ActionItem(action: $0, title: l("messenger.chat.action.\($0.rawValue)"),
                                     isDestructive: [.deleteForMe, .deleteForEveryone, .discard].contains($0)) }
    }

    // MARK: Composer

    /// The text as typed: "Send" works when it holds more than spaces, or a file is picked.
    public func setDraft(_ text: String) {
        update { $0.draft = text; $0.isSendEnabled = Self.canSend(text, files: files); $0.errorMessage = nil }
    }

    /// Files picked for the next message.
    private var files: [OutboxFile] = []

    /// "Attach": a file or photo the app's picker gave (its bytes, name and type) goes with the
    /// next message. It is kept on the device with the message until the server has it, so a
    /// message written offline sends its files when the device is back online.
    public func attach(_ data: Data, fileName: String, contentType: String) {
        guard state.isAttachEnabled else { return }
        let l = environment.localizer
        guard !data.isEmpty else { update { $0.errorMessage = l("messenger.chat.emptyFile") }; return }
        let name = fileName.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty ? "file" : fileName
        let file = OutboxFile(fileName: name, contentType: contentType.isEmpty ? "application/octet-stream" : contentType, data: data)
        files.append(file)
        let sizes = ByteCountFormatter()
        sizes.countStyle = .file
        let draft = DraftFile(id: file.id, fileName: name, size: sizes.string(fromByteCount: Int64(data.count)), isImage: file.contentType.lowercased().hasPrefix("image/"))
        update {
            $0.draftFiles.append(draft)
            $0.isAttachEnabled = files.count < Self.filesPerMessage
            $0.isSendEnabled = true
            $0.errorMessage = nil
        }
    }

    /// Takes a picked file off the next message.
    public func removeFile(_ id: UUID) {
        files.removeAll { $0.id == id }
        update {
            $0.draftFiles.removeAll { $0.id == id }
            $0.isAttachEnabled = files.count < Self.filesPerMessage && !Self.isEditing($0.composer)
            $0.isSendEnabled = Self.canSend($0.draft, files: files)
        }
    }

    /// The server's default limit of attachments in one message.
    public static let filesPerMessage = 10

    private static func isEditing(_ composer: Composer) -> Bool { if case .edit = composer { true } else { false } }

    /// "Send": a new message (or the reply) with its files, or the edit. Shown at once; pending until the server has it.
    public func send() {
        let text = state.draft.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty || (!files.isEmpty && !Self.isEditing(state.composer)) else { return }
        do {
            switch state.composer {
            case .new:
                try repository.send(text, in: chatId, files: files)
            case .reply(let id, _):
                try repository.send(text, in: chatId, replyTo: messages.first { $0.id == id }?.message, files: files)
            case .edit(let id):
                guard let message = messages.first(where: { $0.id == id })?.message else { break }
                if message.text != text { try repository.edit(message, text: text) }
            }
            if !Self.isEditing(state.composer) { files = [] }
            update {
                if !Self.isEditing($0.composer) { $0.draftFiles = [] }
                $0.draft = ""; $0.composer = .new; $0.composerTitle = nil; $0.isSendEnabled = Self.canSend("", files: files)
                $0.isAttachEnabled = files.count < Self.filesPerMessage
            }
        } catch {
            update { $0.errorMessage = environment.message(for: error) }
        }
    }

    /// Leaves reply or edit mode.
    public func cancelComposer() {
        let wasEditing = if case .edit = state.composer { true } else { false }
        update {
            $0.composer = .new
            $0.composerTitle = nil
            if wasEditing { $0.draft = ""; $0.isSendEnabled = Self.canSend("", files: files) }
            $0.isAttachEnabled = files.count < Self.filesPerMessage
        }
    }

    // MARK: History

    /// The page before the oldest message shown (scrolled to the top).
    public func loadOlder() async {
        guard state.canLoadOlder, !state.isLoadingOlder else { return }
        update { $0.isLoadingOlder = true }
        do {
            try await repository.loadOlder(in: chatId)
            update { $0.isLoadingOlder = false }
        } catch {
            update { $0.isLoadingOlder = false; $0.errorMessage = environment.message(for: error) }
        }
        rebuild()
    }

    // MARK: A message's menu

    /// A message pressed: its menu.
    public func select(_ id: UUID) {
        guard let local = messages.first(where: { $0.id == id }) else { return }
        let actions = actions(for: local, me: repository.account.id)
        update { $0.selected = actions.isEmpty ? nil : id; $0.actions = actions }
    }

    /// Closes the message menu.
    public func dismissMenu() { update { $0.selected = nil; $0.actions = [] } }

    /// An item of the open menu.
    public func perform(_ action: MessageAction) {
        guard let id = state.selected, let local = messages.first(where: { $0.id == id }),
              state.actions.contains(where: { $0.action == action }) else { return }
        let message = local.message
        let l = environment.localizer
        dismissMenu()
        do {
            switch action {
            case .reply:
                let quote = Quote(author: author(message.authorId, me: repository.account.id), text: String(message.text.prefix(100)))
                update { $0.composer = .reply(to: id, quote); $0.composerTitle = l("messenger.chat.replyingTo", quote.author) }
            case .edit:
                // An edit changes the text only: files wait for the next new message.
                update { $0.composer = .edit(id); $0.composerTitle = l("messenger.chat.editing"); $0.draft = message.text; $0.isSendEnabled = true; $0.isAttachEnabled = false }
            case .deleteForMe:
                try repository.delete(message, for: .me)
            case .deleteForEveryone:
                try repository.delete(message, for: .everyone)
            case .forward:
                navigate(.forward(message))
            case .retry:
                repository.retry(local)
            case .discard:
                repository.discard(local)
            }
        } catch {
            update { $0.errorMessage = environment.message(for: error) }
        }
    }

    /// The header tapped: the person's profile with the chat's attachments.
    public func openProfile() { navigate(.person(chat.person, chat: chatId)) }

    /// "Back": leaves the screen.
    public func back() {
        isVisible = false
        navigate(.back)
    }
}

/// "Forward": my chats to pick one or more of; "Send" forwards the message to each.
@MainActor
public final class ForwardPickerViewModel: MessengerScreenModel<ForwardPickerViewModel.State> {
    /// A chat to forward to.
    public struct Row: Equatable, Sendable, Identifiable {
        /// Its id.
        public var id: UUID
        /// The person of that chat.
        public var person: PersonRow
        /// Whether it is ticked.
        public var isSelected: Bool
    }

    /// What the screen draws: every title, value and switch of its view.
    public struct State: Equatable, Sendable {
        /// The screen's title.
        public var title: String
        /// The rows, in the order shown.
        public var rows: [Row]
        /// The "send" button's title.
        public var sendTitle: String
        /// Whether "send" works now.
        public var isSendEnabled = false
        /// A call is in flight: show progress and keep the buttons off.
        public var isLoading = false
        /// Why the last action failed, in the person's language; nil when nothing failed.
        public var errorMessage: String?
    }

    private let message: Message

    init(environment: MessengerEnvironment, repository: MessengerRepository, message: Message) {
        self.message = message
        let l = environment.localizer
        super.init(environment: environment, repository: repository, state: State(title: l("messenger.forward.title"),
                                rows: repository.chats.map { Row(id: $0.id, person: PersonRow($0.person, environment.localizer), isSelected: false) },
                                sendTitle: l("messenger.forward.send")))
    }

    /// A chat tapped: picked, or unpicked.
    public func toggle(_ id: UUID) {
        update { state in
            guard let index = state.rows.firstIndex(where: { $0.id == id }) else { return }
            state.rows[index].isSelected.toggle()
            state.isSendEnabled = state.rows.contains(where: \.isSelected) && !state.isLoading
        }
    }

    /// "Send": forwards to the picked chats, then closes.
    public func send() async {
        let picked = state.rows.filter(\.isSelected).map(\.id)
        guard !picked.isEmpty, !state.isLoading else { return }
        update { $0.isLoading = true; $0.isSendEnabled = false; $0.errorMessage = nil }
        do {
            try await repository.forward(message, to: picked)
            update { $0.isLoading = false }
            navigate(.back)
        } catch {
            update { $0.isLoading = false; $0.isSendEnabled = true; $0.errorMessage = environment.message(for: error) }
        }
    }

    /// "Back": leaves the screen.
    public func back() { navigate(.back) }
}
