import Foundation
import GatehouseAPI
import GatehouseKit

/// Where a messenger screen asks to go; the tab bar's model acts on it (one mechanism for every
/// screen's navigation).
public enum MessengerNavigation: Equatable, Sendable {
    /// A person's profile; with a chat, the profile behind that chat's header (with its attachments).
    case person(Person, chat: UUID? = nil)
    /// A chat, opened on the Chats tab.
    case chat(Chat)
    /// The people search.
    case peopleSearch
    /// Picking a friend to write to.
    case newChat
    /// Forwarding a message to chats.
    case forward(Message)
    /// Editing my profile.
    case editProfile
    /// Who may message me.
    case privacy
    /// The theme.
    case theme
    /// "Delete account" (its password and confirmation).
    case deleteAccount
    /// Close the screen on top.
    case back
}

/// The messenger once signed in: the tab bar (Friends, Chats, Profile), each tab's stack of
/// screens pushed over its root, and the line about the connection. Every screen's model is made
/// and wired here, so a UIKit app pushes what ``State/stacks`` holds and nothing else.
@MainActor
public final class MessengerMainViewModel: ScreenModel<MessengerMainViewModel.State> {
    /// The tab bar's tabs.
    public enum Tab: String, CaseIterable, Equatable, Sendable {
        /// Friends and requests.
        case friends
        /// The chats.
        case chats
        /// My profile and settings.
        case profile
    }

    /// A screen pushed over a tab's root, with its model.
    public enum Route: Equatable {
        /// Shows ``PeopleSearchViewModel``.
        case peopleSearch(PeopleSearchViewModel)
        /// Shows ``PersonProfileViewModel``.
        case person(PersonProfileViewModel)
        /// Shows ``ChatViewModel``.
        case chat(ChatViewModel)
        /// Shows ``FriendPickerViewModel``.
        case newChat(FriendPickerViewModel)
        /// Shows ``ForwardPickerViewModel``.
        case forward(ForwardPickerViewModel)
        /// Shows ``EditProfileViewModel``.
        case editProfile(EditProfileViewModel)
        /// Shows ``PrivacyViewModel``.
        case privacy(PrivacyViewModel)
        /// Shows ``ThemeViewModel``.
        case theme(ThemeViewModel)
        /// Shows ``DeleteAccountViewModel``.
        case deleteAccount(DeleteAccountViewModel)

        /// The same screen (the same model).
        public static func == (a: Route, b: Route) -> Bool { a.model === b.model }

        /// The screen's view model.
        public var model: AnyObject {
            switch self {
            case .peopleSearch(let m): m
            case .person(let m): m
            case .chat(let m): m
            case .newChat(let m): m
            case .forward(let m): m
            case .editProfile(let m): m
            case .privacy(let m): m
            case .theme(let m): m
            case .deleteAccount(let m): m
            }
        }
    }

    /// What the screen draws: every title, value and switch of its view.
    public struct State: Equatable {
        /// The tab on display.
        public var selectedTab: Tab = .chats
        /// Each tab's label.
        public var tabTitles: [Tab: String]
        /// Each tab's pushed screens, bottom first (the root screens are ``friends``, ``chats``, ``profile``).
        public var stacks: [Tab: [Route]] = [:]
        /// "Offline: showing saved data" / "Connecting…"; nil when online.
        public var connectivityNotice: String?
        /// The Chats tab's badge: chats with unread messages.
        public var unreadChats = 0
        /// The Friends tab's badge: requests waiting for me.
        public var incomingRequests = 0

        /// The screens over the selected tab's root.
        public var path: [Route] { stacks[selectedTab] ?? [] }
    }

    /// Where the screen leads; the flow acts on it.
    public enum Outcome: Equatable, Sendable {
        /// Logged out here or elsewhere: the store is wiped; back to login.
        case loggedOut
        /// The account was deleted here: the store is wiped; back to login, saying until when a
        /// password login takes it back.
        case accountDeleted(notice: String)
    }

    /// Called with the screen's outcome (the flow sets it).
    public var onOutcome: ((Outcome) -> Void)?
    /// The messenger's data on this device, kept in step with the server.
    public let repository: MessengerRepository
    /// The Friends tab's root screen.
    public let friends: FriendsViewModel
    /// The Chats tab's root screen.
    public let chats: ChatsViewModel
    /// The Profile tab's root screen.
    public let profile: ProfileViewModel
    private let environment: MessengerEnvironment
    private var token: ObservationToken?
    /// The account is being deleted here: its end is told as ``Outcome/accountDeleted(notice:)``.
    private var deleting = false

    /// The messenger on `repository` (signed in), with `environment`'s words and device settings.
    public init(environment: MessengerEnvironment, repository: MessengerRepository) {
        self.environment = environment
        self.repository = repository
        let l = environment.localizer
        friends = FriendsViewModel(environment: environment, repository: repository)
        chats = ChatsViewModel(environment: environment, repository: repository)
        profile = ProfileViewModel(environment: environment, repository: repository)
        super.init(state: State(tabTitles: Dictionary(uniqueKeysWithValues: Tab.allCases.map { ($0, l("messenger.tab.\($0.rawValue)")) })))
        for screen in [friends.navigate, chats.navigate, profile.navigate] as [NavigationHook] { screen.handler = { [weak self] in self?.go($0) } }
        token = repository.observe { [weak self] changes in
            if changes.contains(.sessionEnded) {
                if self?.deleting == false { self?.onOutcome?(.loggedOut) }
                return
            }
            self?.refresh()
        }
        refresh()
    }

    /// Goes online (call when the tab bar appears).
    public func start() {
        repository.start()
    }

    private func refresh() {
        update {
            $0.connectivityNotice = connectivityNotice(repository.connectivity, environment.localizer)
            $0.unreadChats = repository.chats.filter(\.unread).count
            $0.incomingRequests = repository.friends.incoming.count
        }
    }

    /// Opening a push (``PushRoute``): a message lands on its chat (read afresh when this device
    /// has not seen it yet), a friend request on the Friends tab. Answers whether it was the
    /// messenger's to open (money routes are the wallet's).
    @discardableResult
    public func open(_ route: PushRoute) async -> Bool {
        switch route {
        case .chat(let id, _):
            if repository.chat(id) == nil { await repository.refreshChats() }
            guard let chat = repository.chat(id) else { return false }
            go(.chat(chat))
            return true
        case .friends:
            update { $0.selectedTab = .friends }
            return true
        case .walletTransfer, .moneyRequest:
            return false
        }
    }

    /// A tab tapped.
    public func select(_ tab: Tab) {
        update { $0.selectedTab = tab }
    }

    /// "Back" (or a swipe back) on the selected tab.
    public func pop() {
        update { state in
            guard var stack = state.stacks[state.selectedTab], !stack.isEmpty else { return }
            stack.removeLast()
            state.stacks[state.selectedTab] = stack
        }
    }

    /// The screen on top of the selected tab, if any.
    public var top: Route? { state.path.last }

    private func push(_ route: Route, on tab: Tab? = nil) {
        update { state in
            let tab = tab ?? state.selectedTab
            state.selectedTab = tab
            state.stacks[tab, default: []].append(route)
        }
    }

    /// Makes and wires the screen a navigation asks for.
    func go(_ navigation: MessengerNavigation) {
        let env = environment
        switch navigation {
        case .back:
            pop()
        case .peopleSearch:
            push(.peopleSearch(wired(PeopleSearchViewModel(environment: env, repository: repository))))
        case .person(let person, let chat):
            push(.person(wired(PersonProfileViewModel(environment: env, repository: repository, person: person, chat: chat))))
        case .chat(let chat):
            // A chat opens on the Chats tab, over its list, whichever tab asked.
            let model = wired(ChatViewModel(environment: env, repository: repository, chat: chat))
            update { state in
                state.stacks[.chats] = (state.stacks[.chats] ?? []).filter {
                    if case .chat = $0 { return false }
                    if case .newChat = $0 { return false }
                    return true
                }
            }
            push(.chat(model), on: .chats)
        case .newChat:
            push(.newChat(wired(FriendPickerViewModel(environment: env, repository: repository))))
        case .forward(let message):
            push(.forward(wired(ForwardPickerViewModel(environment: env, repository: repository, message: message))))
        case .editProfile:
            push(.editProfile(wired(EditProfileViewModel(environment: env, repository: repository))))
        case .privacy:
            push(.privacy(wired(PrivacyViewModel(environment: env, repository: repository))))
        case .theme:
            let model = ThemeViewModel(environment: env, repository: repository)
            model.onChange = { [weak self] _ in self?.profile.rebuild(); self?.themeChanged?() }
            push(.theme(wired(model)))
        case .deleteAccount:
            let client = env.client
            let model = DeleteAccountViewModel(localizer: env.localizer, timeZone: env.timeZone,
                                               delete: { try await client.deleteAccount(currentPassword: $0) }, message: env.message(for:),
                                               identities: client)
            model.onOutcome = { [weak self] outcome in
                guard let self else { return }
                switch outcome {
                case .cancelled: pop()
                case .deleted(_, let notice):
                    deleting = true
                    Task { @MainActor in
                        await self.repository.logout()
                        self.onOutcome?(.accountDeleted(notice: notice))
                    }
                }
            }
            push(.deleteAccount(model))
            Task { await model.load() }
        }
    }

    /// Called when the theme screen changes the theme (the flow re-reads it).
    var themeChanged: (() -> Void)?

    private func wired<Model: Navigating>(_ model: Model) -> Model {
        model.navigate.handler = { [weak self] in self?.go($0) }
        return model
    }
}

/// A screen that can ask to go somewhere.
@MainActor
protocol Navigating: AnyObject {
    var navigate: NavigationHook { get }
}

/// What every messenger screen's model has: the environment, the account's repository, and
/// the hook it navigates through.
@MainActor
public class MessengerScreenModel<State: Equatable>: ScreenModel<State>, Navigating {
    /// Where a screen asks to go: the tab bar's stacks act on it.
    public let navigate = NavigationHook()
    let environment: MessengerEnvironment
    let repository: MessengerRepository

    init(environment: MessengerEnvironment, repository: MessengerRepository, state: State) {
        self.environment = environment
        self.repository = repository
        super.init(state: state)
    }
}

/// The closure a screen calls to navigate; the tab bar's model sets it.
@MainActor
public final class NavigationHook {
    var handler: ((MessengerNavigation) -> Void)?
    nonisolated init() {}
    func callAsFunction(_ navigation: MessengerNavigation) { handler?(navigation) }
}
