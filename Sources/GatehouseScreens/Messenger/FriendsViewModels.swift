import Foundation
import GatehouseAPI
import GatehouseKit

/// The Friends tab: my friends, the requests to me and from me (each section only when it has
/// someone), searched by name or tag on the device and sorted by name or tag (the choice is
/// remembered); "+" opens the people search. Shows the saved lists when offline.
@MainActor
public final class FriendsViewModel: MessengerScreenModel<FriendsViewModel.State> {
    /// The order of the friends list: by name or by tag.
    public enum Sort: String, CaseIterable, Equatable, Sendable {
        /// By name.
        case name
        /// By tag.
        case tag
    }

    /// The list's parts, in the spec's order: my friends, my requests, requests to me.
    public enum SectionKind: String, CaseIterable, Equatable, Sendable {
        /// My friends.
        case friends
        /// My requests.
        case outgoing
        /// Requests to me.
        case incoming
    }

    /// One part of the list, with its title and people.
    public struct Section: Equatable, Sendable {
        /// Which part it is.
        public var kind: SectionKind
        /// The screen's title.
        public var title: String
        /// The rows, in the order shown.
        public var rows: [PersonRow]
    }

    /// One choice of the sort control.
    public struct SortOption: Equatable, Sendable {
        /// The order it picks.
        public var sort: Sort
        /// The screen's title.
        public var title: String
    }

    /// What the screen draws: every title, value and switch of its view.
    public struct State: Equatable, Sendable {
        /// The screen's title.
        public var title: String
        /// What is typed in the search field.
        public var query = ""
        /// The search field's placeholder.
        public var searchPlaceholder: String
        /// The order in use (kept on the device).
        public var sort: Sort
        /// The sort control's choices.
        public var sortOptions: [SortOption]
        /// The non-empty sections, friends first.
        public var sections: [Section] = []
        /// "No friends yet…" or "Nobody matches…", when there are no sections.
        public var emptyMessage: String?
        /// The connection line; nil when online.
        public var notice: String?
        /// The accessibility label of "+".
        public var addTitle: String
    }

    static let sortKey = "friends.sort"
    private var token: ObservationToken?

    init(environment: MessengerEnvironment, repository: MessengerRepository) {
        let l = environment.localizer
        let sort = repository.store.preference(Self.sortKey).flatMap(Sort.init(rawValue:)) ?? .name
        super.init(environment: environment, repository: repository, state: State(title: l("messenger.friends.title"), searchPlaceholder: l("messenger.friends.search"), sort: sort,
                                sortOptions: Sort.allCases.map { SortOption(sort: $0, title: l("messenger.friends.sort.\($0.rawValue)")) },
                                addTitle: l("messenger.friends.add")))
        token = repository.observe { [weak self] changes in
            if changes.contains(.friends) || changes.contains(.connectivity) { self?.rebuild() }
        }
        rebuild()
    }

    private func rebuild() {
        let l = environment.localizer
        let overview = repository.friends
        update { state in
            let lists: [(SectionKind, [Person])] = [(.friends, overview.friends), (.outgoing, overview.outgoing), (.incoming, overview.incoming)]
            state.sections = lists.compactMap { kind, people in
                let rows = Self.sorted(people.filter { LocalSearch.matches($0, state.query) }, by: state.sort, environment.localizer).map { PersonRow($0, environment.localizer) }
                return rows.isEmpty ? nil : Section(kind: kind, title: l("messenger.friends.section.\(kind.rawValue)"), rows: rows)
            }
            let anyone = !(overview.friends.isEmpty && overview.incoming.isEmpty && overview.outgoing.isEmpty)
            state.emptyMessage = state.sections.isEmpty ? (anyone ? l("messenger.friends.noMatches") : l("messenger.friends.empty")) : nil
            state.notice = connectivityNotice(repository.connectivity, l)
        }
    }

    static func sorted(_ people: [Person], by sort: Sort, _ l: Localizer) -> [Person] {
        func key(_ person: Person) -> String {
            switch sort {
            case .tag: person.tag
            case .name: LocalSearch.fold(PersonRow.name(of: person, l))
            }
        }
        return people.sorted { (key($0), $0.tag) < (key($1), $1.tag) }
    }

    /// The search field as typed.
    public func setQuery(_ query: String) {
        update { $0.query = query }
        rebuild()
    }

    /// Sort by name or by tag; remembered for next time.
    public func setSort(_ sort: Sort) {
        try? repository.store.setPreference(Self.sortKey, sort.rawValue)
        update { $0.sort = sort }
        rebuild()
    }

    /// A cell tapped: the person's profile.
    public func open(_ id: UUID) {
        let overview = repository.friends
        guard let person = (overview.friends + overview.incoming + overview.outgoing).first(where: { $0.id == id }) else { return }
        navigate(.person(person))
    }

    /// "+": the people search.
    public func add() { navigate(.peopleSearch) }

    /// Pull to refresh.
    public func refresh() async { await repository.refreshFriends() }
}

/// Everyone on the server, searched by name or tag (the server's search, paged); the same cells
/// as the friends list. Needs the network.
@MainActor
public final class PeopleSearchViewModel: MessengerScreenModel<PeopleSearchViewModel.State> {
    /// What the screen draws: every title, value and switch of its view.
    public struct State: Equatable, Sendable {
        /// The screen's title.
        public var title: String
        /// What is typed in the search field.
        public var query = ""
        /// The search field's placeholder.
        public var searchPlaceholder: String
        /// The rows, in the order shown.
        public var rows: [PersonRow] = []
        /// A call is in flight: show progress and keep the buttons off.
        public var isLoading = false
        /// More results wait (load them when the last cell shows).
        public var hasMore = false
        /// "Type a name or a tag" before a search, "Nobody found" after an empty one.
        public var emptyMessage: String?
        /// Why the last action failed, in the person's language; nil when nothing failed.
        public var errorMessage: String?
    }

    private var people: [Person] = []
    private var cursor: String?
    private var search: Task<Void, Never>?

    init(environment: MessengerEnvironment, repository: MessengerRepository) {
        let l = environment.localizer
        super.init(environment: environment, repository: repository, state: State(title: l("messenger.people.title"), searchPlaceholder: l("messenger.friends.search"),
                                emptyMessage: l("messenger.people.hint")))
    }

    deinit { search?.cancel() }

    /// The search field as typed: searches after a pause in typing.
    public func setQuery(_ query: String) {
        update { $0.query = query; $0.errorMessage = nil }
        search?.cancel()
        let trimmed = query.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else {
            people = []
            update { $0.rows = []; $0.hasMore = false; $0.isLoading = false; $0.emptyMessage = environment.localizer("messenger.people.hint") }
            return
        }
        let delay = environment.tagCheckDelay
        search = Task { [weak self] in
            if delay > 0 { try? await Task.sleep(nanoseconds: UInt64(delay * 1_000_000_000)) }
            guard !Task.isCancelled else { return }
            await self?.load(trimmed, more: false)
        }
    }

    /// Waits for the search in flight (a terminal or a test that wants its answer).
    public func settle() async { await search?.value }

    /// The next page (the last cell showed).
    public func loadMore() async {
        guard state.hasMore, !state.isLoading else { return }
        await load(state.query.trimmingCharacters(in: .whitespaces), more: true)
    }

    private func load(_ query: String, more: Bool) async {
        update { $0.isLoading = true }
        do {
            let page = try await repository.searchPeople(query, cursor: more ? cursor : nil)
            guard state.query.trimmingCharacters(in: .whitespaces) == query else { return }
            people = (more ? people : []) + page.items
            cursor = page.nextCursor
            update {
                $0.isLoading = false
                $0.rows = people.map { PersonRow($0, environment.localizer) }
                $0.hasMore = page.nextCursor != nil
                $0.emptyMessage = people.isEmpty ? environment.localizer("messenger.people.none") : nil
            }
        } catch is CancellationError {
            update { $0.isLoading = false }
        } catch {
            update { $0.isLoading = false; $0.errorMessage = environment.message(for: error) }
        }
    }

    /// Opens a person's profile.
    public func open(_ id: UUID) {
        guard let person = people.first(where: { $0.id == id }) else { return }
        navigate(.person(person))
    }

    /// "Back": leaves the screen.
    public func back() { navigate(.back) }
}

/// Chats' "+": my friends (the same cells and search); picking one opens our chat, or makes it.
@MainActor
public final class FriendPickerViewModel: MessengerScreenModel<FriendPickerViewModel.State> {
    /// What the screen draws: every title, value and switch of its view.
    public struct State: Equatable, Sendable {
        /// The screen's title.
        public var title: String
        /// What is typed in the search field.
        public var query = ""
        /// The search field's placeholder.
        public var searchPlaceholder: String
        /// The rows, in the order shown.
        public var rows: [PersonRow] = []
        /// What an empty list says.
        public var emptyMessage: String?
        /// A call is in flight: show progress and keep the buttons off.
        public var isLoading = false
        /// Why the last action failed, in the person's language; nil when nothing failed.
        public var errorMessage: String?
    }


    init(environment: MessengerEnvironment, repository: MessengerRepository) {
        let l = environment.localizer
        super.init(environment: environment, repository: repository, state: State(title: l("messenger.newChat.title"), searchPlaceholder: l("messenger.friends.search")))
        rebuild()
    }

    private func rebuild() {
        let l = environment.localizer
        update { state in
            let friends = repository.friends.friends
            state.rows = FriendsViewModel.sorted(friends.filter { LocalSearch.matches($0, state.query) }, by: .name, environment.localizer).map { PersonRow($0, environment.localizer) }
            state.emptyMessage = state.rows.isEmpty ? l(friends.isEmpty ? "messenger.newChat.noFriends" : "messenger.friends.noMatches") : nil
        }
    }

    /// Searches as typed (a name, or a tag with or without `@`).
    public func setQuery(_ query: String) {
        update { $0.query = query }
        rebuild()
    }

    /// A friend picked: our chat opens.
    public func pick(_ id: UUID) async {
        guard !state.isLoading else { return }
        update { $0.isLoading = true; $0.errorMessage = nil }
        do {
            let chat = try await repository.openChat(with: id)
            update { $0.isLoading = false }
            navigate(.chat(chat))
        } catch {
            update { $0.isLoading = false; $0.errorMessage = environment.message(for: error) }
        }
    }

    /// "Back": leaves the screen.
    public func back() { navigate(.back) }
}

/// A person's profile: names, tag, avatar; the friendship action that fits (add, cancel, accept
/// or decline, remove after a confirmation), and block (after a confirmation) or unblock; "Write a
/// message" opens our chat or makes it. Opened from a chat's header it also lists the chat's attachments.
@MainActor
public final class PersonProfileViewModel: MessengerScreenModel<PersonProfileViewModel.State> {
    /// The profile's buttons: friendship, and blocking.
    public enum Action: String, Equatable, Sendable {
        /// Ask to be friends.
        case add
        /// Take back my request.
        case cancel
        /// Accept their request.
        case accept
        /// Decline their request.
        case decline
        /// Stop being friends (asks first).
        case remove
        /// Block them (asks first).
        case block
        /// Unblock them.
        case unblock
    }

    /// One button of the profile.
    public struct ActionButton: Equatable, Sendable {
        /// What it does.
        public var action: Action
        /// The screen's title.
        public var title: String
        /// Whether destructive.
        public var isDestructive: Bool
    }

    /// One attachment of the chat (its profile).
    public struct AttachmentRow: Equatable, Sendable, Identifiable {
        /// Its id.
        public var id: UUID
        /// The file's name.
        public var fileName: String
        /// Whether image.
        public var isImage: Bool
        /// "1.2 MB · 5 March".
        public var details: String
        /// Where its bytes are (read with the session: ``open(_:)`` does it).
        public var url: URL?
    }

    /// What the screen draws: every title, value and switch of its view.
    public struct State: Equatable, Sendable {
        /// The person.
        public var person: PersonRow
        /// "Your friend", "Wants to be your friend", "Request sent"; nil for nobody yet.
        public var relationText: String?
        /// "Blocked: nothing of theirs reaches you", while I block them.
        public var blockedText: String?
        /// The buttons that fit the relation (add; cancel; accept and decline; remove), and block or unblock.
        public var actions: [ActionButton] = []
        /// The "Write a message" button's title.
        public var messageTitle: String
        /// The remove question, while shown.
        public var confirmation: Confirmation?
        /// The chat's attachments, when opened from a chat.
        public var attachments: [AttachmentRow] = []
        /// The attachments section's title (opened from a chat; nil otherwise).
        public var attachmentsTitle: String?
        /// A call is in flight: show progress and keep the buttons off.
        public var isLoading = false
        /// Why the last action failed, in the person's language; nil when nothing failed.
        public var errorMessage: String?
        /// A notice over the screen (offline, say); nil when there is none.
        public var notice: String?
    }

    /// An attachment opened from the list: its bytes, for the app to show (Quick Look on iOS) or save.
    public struct OpenedAttachment: Equatable, Sendable {
        /// Its id.
        public var id: UUID
        /// The file's name.
        public var fileName: String
        /// Its type, as the server keeps it.
        public var contentType: String
        /// The bytes.
        public var data: Data
    }

    /// Hands an opened attachment to the app.
    public var onOpenAttachment: ((OpenedAttachment) -> Void)?

    private var person: Person
    private var isBlocked = false
    private let chatId: UUID?
    private var token: ObservationToken?

    init(environment: MessengerEnvironment, repository: MessengerRepository, person: Person, chat: UUID?) {
        self.person = person
        self.chatId = chat
        let l = environment.localizer
        super.init(environment: environment, repository: repository, state: State(person: PersonRow(person, environment.localizer), messageTitle: l("messenger.person.write"),
                                attachmentsTitle: chat == nil ? nil : l("messenger.person.attachments")))
        apply(person)
        // The other side acts while the profile is open (accepts my request, declines it, removes me):
        // the friends lists change live, and the relation shown follows them.
        token = repository.observe { [weak self] changes in
            if changes.contains(.friends) { self?.followFriends() }
        }
    }

    /// The relation the friends lists now say, when it differs from the one shown.
    private func followFriends() {
        let lists = repository.friends
        let relation: PersonRelation = if let friend = lists.friends.first(where: { $0.id == person.id }) { friend.relation }
            else if lists.incoming.contains(where: { $0.id == person.id }) { .incoming }
            else if lists.outgoing.contains(where: { $0.id == person.id }) { .outgoing }
            else { .none }
        guard relation != person.relation else { return }
        var fresh = (lists.friends + lists.incoming + lists.outgoing).first { $0.id == person.id } ?? person
        fresh.relation = relation
        if relation == .none || relation == .friend { fresh.requestId = nil }
        apply(fresh)
    }

    private func apply(_ person: Person) {
        self.person = person
        let l = environment.localizer
        func button(_ action: Action, destructive: Bool = false) -> ActionButton {
            ActionButton(action: action, title: l("messenger.person.\(action.rawValue)"), isDestructive: destructive)
        }
        update {
            $0.person = PersonRow(person, environment.localizer)
            switch person.relation {
            case .none: $0.relationText = nil; $0.actions = [button(.add)]
            case .friend: $0.relationText = l("messenger.person.isFriend"); $0.actions = [button(.remove, destructive: true)]
            case .incoming: $0.relationText = l("messenger.person.isIncoming"); $0.actions = [button(.accept), button(.decline, destructive: true)]
            case .outgoing: $0.relationText = l("messenger.person.isOutgoing"); $0.actions = [button(.cancel)]
            }
            $0.actions.append(isBlocked ? button(.unblock) : button(.block, destructive: true))
            $0.blockedText = isBlocked ? l("messenger.person.isBlocked") : nil
            $0.notice = connectivityNotice(repository.connectivity, l)
        }
    }

    /// Reads the person (and the chat's attachments) again when the screen appears.
    public func appear() async {
        do {
            // Read together; applied only if no action changed the person meanwhile (a tap while
            // the screen appears must not be overwritten by what was read before it).
            let actionsBefore = actionsRun
            async let reading = repository.person(person.id)
            async let blocked = repository.isBlocked(person.id)
            let (fresh, isBlocked) = try await (reading, blocked)
            if actionsRun == actionsBefore {
                self.isBlocked = isBlocked
                apply(fresh)
            }
            if let chatId {
                let page = try await repository.attachments(of: chatId)
                let clock = MessengerClock(environment: environment)
                let sizes = ByteCountFormatter()
                update {
                    $0.attachments = page.items.map { item in
                        AttachmentRow(id: item.attachment.id, fileName: item.attachment.fileName, isImage: item.attachment.kind == .image,
                                      details: sizes.string(fromByteCount: Int64(item.attachment.size)) + " · " + clock.stamp(item.sentAt),
                                      url: URL(string: item.attachment.url))
                    }
                }
            }
        } catch {
            // Offline: the profile as it was passed in.
            update { $0.notice = connectivityNotice(repository.connectivity, environment.localizer) }
        }
    }

    /// Opens one of the chat's attachments: downloads its bytes (with the session: attachments
    /// are not public) and hands them to the app.
    public func open(_ attachment: UUID) async {
        guard let row = state.attachments.first(where: { $0.id == attachment }), !state.isLoading else { return }
        update { $0.isLoading = true; $0.errorMessage = nil }
        do {
            let body = try await repository.download(attachment)
            update { $0.isLoading = false }
            onOpenAttachment?(OpenedAttachment(id: attachment, fileName: row.fileName, contentType: body.contentType, data: body.data))
        } catch {
            update { $0.isLoading = false; $0.errorMessage = environment.message(for: error) }
        }
    }

    /// A button tapped; "Remove" and "Block" ask first.
    public func perform(_ action: Action) async {
        guard !state.isLoading, state.actions.contains(where: { $0.action == action }) else { return }
        if action == .remove || action == .block {
            let l = environment.localizer
            let name = PersonRow.name(of: person, environment.localizer)
            update {
                $0.confirmation = action == .remove
                    ? Confirmation(title: l("messenger.person.removeQuestion", name), message: nil,
                                   confirmTitle: l("messenger.person.remove"), cancelTitle: l("common.cancel"))
                    : Confirmation(title: l("messenger.person.blockQuestion", name), message: l("messenger.person.blockExplained"),
                                   confirmTitle: l("messenger.person.block"), cancelTitle: l("common.cancel"))
            }
            asked = action
            return
        }
        await run(action)
    }

    /// The action the confirmation asks about.
    private var asked: Action?

    /// "Remove" or "Block" on the question.
    public func confirm() async {
        guard state.confirmation != nil, let action = asked else { return }
        update { $0.confirmation = nil }
        asked = nil
        await run(action)
    }

    /// Does nothing after all: the question goes.
    public func cancelConfirmation() {
        asked = nil
        update { $0.confirmation = nil }
    }

    /// How many actions started: what `appear` read before one is stale.
    private var actionsRun = 0

    private func run(_ action: Action) async {
        actionsRun += 1
        update { $0.isLoading = true; $0.errorMessage = nil }
        do {
            switch action {
            case .add: apply(try await repository.requestFriend(person))
            case .accept: apply(try await repository.acceptRequest(from: person))
            case .decline: try await repository.declineRequest(from: person)
            case .cancel: try await repository.cancelRequest(to: person)
            case .remove: try await repository.removeFriend(person)
            case .block: try await repository.block(person); isBlocked = true; apply(person)
            case .unblock: try await repository.unblock(person); isBlocked = false; apply(person)
            }
            if [.decline, .cancel, .remove].contains(action) {
                var updated = person
                updated.relation = .none
                updated.requestId = nil
                apply((try? await repository.person(person.id)) ?? updated)
            }
            update { $0.isLoading = false }
        } catch {
            update { $0.isLoading = false; $0.errorMessage = environment.message(for: error) }
        }
    }

    /// "Write a message": our chat, opened or made.
    public func writeMessage() async {
        guard !state.isLoading else { return }
        update { $0.isLoading = true; $0.errorMessage = nil }
        do {
            let chat = try await repository.openChat(with: person.id)
            update { $0.isLoading = false }
            navigate(.chat(chat))
        } catch {
            update { $0.isLoading = false; $0.errorMessage = environment.message(for: error) }
        }
    }

    /// "Back": leaves the screen.
    public func back() { navigate(.back) }
}
