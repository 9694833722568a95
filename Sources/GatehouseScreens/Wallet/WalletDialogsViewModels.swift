import Foundation
import GatehouseAPI
import GatehouseKit

/// The spec's dialogs list: my balance and my chats, each with its last message (a transfer or a
/// request reads as one: "You sent 250,50 ₽"), newest first, plus "Send money" and "Request money"
/// to someone new.
@MainActor
public final class WalletDialogsViewModel: ScreenModel<WalletDialogsViewModel.State> {
    public struct Row: Equatable, Sendable, Identifiable {
        public var id: UUID
        public var name: String
        public var preview: String
        public var unread: Bool
    }

    public struct State: Equatable, Sendable {
        public var title: String
        public var balanceLabel: String
        public var balance = ""
        public var rows: [Row] = []
        public var emptyText: String
        public var sendTitle: String
        public var requestTitle: String
        public var backTitle: String
        public var isLoading = false
        public var errorMessage: String?
    }

    public enum Outcome: Equatable, Sendable {
        case open(Chat)
        case send
        case request
        case back
    }

    public var onOutcome: ((Outcome) -> Void)?
    private let environment: WalletEnvironment
    private let account: Account
    private var chats: [Chat] = []

    public init(environment: WalletEnvironment, account: Account) {
        self.environment = environment
        self.account = account
        let l = environment.localizer
        super.init(state: State(title: l("wallet.dialogs.title"), balanceLabel: l("wallet.home.balance"), emptyText: l("wallet.dialogs.empty"),
                                sendTitle: l("wallet.dialogs.send"), requestTitle: l("wallet.dialogs.request"), backTitle: l("wallet.dialogs.back")))
    }

    /// Loads the balance and the dialogs (on appearing, and on a wallet or message event).
    public func load() async {
        update { $0.isLoading = true; $0.errorMessage = nil }
        do {
            async let wallet = environment.wallet.wallet()
            async let page = environment.messenger.chats()
            let (info, chats) = try await (wallet, page)
            self.chats = chats.items
            let l = environment.localizer
            update {
                $0.isLoading = false
                $0.balance = WalletFormat.money(info.balance, l)
                $0.rows = chats.items.map { chat in
                    Row(id: chat.id, name: WalletFormat.name(chat.person), preview: Self.preview(chat.lastMessage, me: self.account.id, other: chat.person, l),
                        unread: chat.unread)
                }
            }
        } catch {
            update { $0.isLoading = false; $0.errorMessage = environment.message(for: error) }
        }
    }

    static func preview(_ message: Message?, me: UUID, other: Person, _ l: Localizer) -> String {
        guard let message else { return "" }
        if let note = message.payment {
            let line = WalletFormat.note(note, mine: message.authorId == me, other: WalletFormat.name(other), l)
            return message.text.isEmpty ? line : line + " · " + message.text
        }
        return message.deleted ? l("wallet.dialog.deleted") : message.text
    }

    public func open(_ id: UUID) { if let chat = chats.first(where: { $0.id == id }) { onOutcome?(.open(chat)) } }
    public func send() { onOutcome?(.send) }
    public func request() { onOutcome?(.request) }
    public func back() { onOutcome?(.back) }
}

/// One dialog: the messages, transfers and requests between me and one person, oldest first,
/// my balance, and the actions each request allows me now (pay, decline, cancel, repay) as the
/// server's state says. "Send money" and "Request money" open the forms for this person.
@MainActor
public final class WalletDialogViewModel: ScreenModel<WalletDialogViewModel.State> {
    /// What a request card offers me.
    public enum Action: String, Equatable, Sendable, CaseIterable { case confirm, decline, cancel, repay }

    public struct Item: Equatable, Sendable, Identifiable {
        public var id: UUID
        public var mine: Bool
        /// The message's text, or the payment's line ("Ann asks you for 100,00 ₽ (loan)").
        public var text: String
        /// The comment of a payment.
        public var comment: String?
        /// For a request: its current state, in words ("open", "paid", …).
        public var requestState: String?
        public var requestID: UUID?
        /// The actions the request allows me now, with their labels.
        public var actions: [Action] = []
        public var time: String
    }

    public struct State: Equatable, Sendable {
        public var title: String
        public var balanceLabel: String
        public var balance = ""
        public var items: [Item] = []
        /// Labels of the request actions.
        public var actionTitles: [Action: String]
        public var sendTitle: String
        public var requestTitle: String
        public var backTitle: String
        /// True while the dialog loads (a live reload too).
        public var isLoading = false
        /// True while an action on a request is in flight: the cards' buttons show progress.
        public var isActing = false
        public var errorMessage: String?
        public var infoMessage: String?
    }

    public enum Outcome: Equatable, Sendable {
        case send(to: Person)
        case request(from: Person)
        case back
    }

    public var onOutcome: ((Outcome) -> Void)?
    private let environment: WalletEnvironment
    private let account: Account
    public let chat: Chat
    /// One intent per request and action, kept until it is answered: a repeated tap, or a retry
    /// after a lost answer, pays once.
    private var intents: [String: PaymentIntent] = [:]

    public init(environment: WalletEnvironment, account: Account, chat: Chat) {
        self.environment = environment
        self.account = account
        self.chat = chat
        let l = environment.localizer
        super.init(state: State(title: WalletFormat.name(chat.person), balanceLabel: l("wallet.home.balance"),
                                actionTitles: Dictionary(uniqueKeysWithValues: Action.allCases.map { ($0, l("wallet.request.\($0.rawValue)")) }),
                                sendTitle: l("wallet.dialogs.send"), requestTitle: l("wallet.dialogs.request"), backTitle: l("wallet.dialog.back")))
    }

    /// Loads the history, the requests' states and the balance.
    public func load() async {
        update { $0.isLoading = true; $0.errorMessage = nil }
        do {
            async let wallet = environment.wallet.wallet()
            async let history = environment.messenger.messages(in: chat.id, limit: 200)
            async let requests = environment.wallet.requests(with: chat.person.id, limit: 200)
            let (info, page, known) = try await (wallet, history, requests)
            let states = Dictionary(uniqueKeysWithValues: known.items.map { ($0.id, $0) })
            let l = environment.localizer
            let formatter = DateFormatter()
            formatter.dateFormat = "dd.MM HH:mm"
            formatter.timeZone = environment.accounts.timeZone
            let items = page.items.map { message -> Item in
                let mine = message.authorId == account.id
                var item = Item(id: message.id, mine: mine, text: message.deleted ? l("wallet.dialog.deleted") : message.text,
                                time: formatter.string(from: message.createdAt))
                if let note = message.payment {
                    item.text = WalletFormat.note(note, mine: mine, other: WalletFormat.name(chat.person), l)
                    item.comment = message.text.isEmpty ? nil : message.text
                    if note.kind == .request, let id = note.requestId {
                        item.requestID = id
                        if let request = states[id] {
                            item.requestState = l("wallet.state.\(request.state.rawValue)")
                            item.actions = Self.actions(request, me: account.id)
                        }
                    }
                }
                return item
            }
            update {
                $0.isLoading = false
                $0.balance = WalletFormat.money(info.balance, l)
                $0.items = items
            }
        } catch {
            update { $0.isLoading = false; $0.errorMessage = environment.message(for: error) }
        }
    }

    /// What a request allows me, as the docs' transition table says.
    static func actions(_ request: MoneyRequest, me: UUID) -> [Action] {
        switch request.state {
        case .open: request.payer.id == me ? [.confirm, .decline] : [.cancel]
        case .paid: request.kind == .loan && request.requester.id == me ? [.repay] : []
        case .declined, .cancelled, .expired, .repaid: []
        }
    }

    /// Takes an action on a request card.
    public func act(_ action: Action, on request: UUID) async {
        // A reload in progress (a live one) does not block the tap; another action in flight does.
        guard !state.isActing, state.items.contains(where: { $0.requestID == request && $0.actions.contains(action) }) else { return }
        let key = "\(action.rawValue):\(request.uuidString)"
        let intent = intents[key] ?? PaymentIntent()
        intents[key] = intent
        update { $0.isActing = true; $0.errorMessage = nil; $0.infoMessage = nil }
        let l = environment.localizer
        do {
            switch action {
            case .confirm:
                let paid = try await environment.wallet.confirm(request, intent: intent)
                update { $0.infoMessage = l("wallet.request.paid", WalletFormat.money(paid.transfer.amount, l), WalletFormat.money(paid.balance, l)) }
            case .repay:
                let paid = try await environment.wallet.repay(request, intent: intent)
                update { $0.infoMessage = l("wallet.request.repaid", WalletFormat.money(paid.transfer.amount, l), WalletFormat.money(paid.balance, l)) }
            case .decline:
                _ = try await environment.wallet.decline(request, intent: intent)
            case .cancel:
                _ = try await environment.wallet.cancel(request, intent: intent)
            }
            intents[key] = nil
        } catch let error as GatehouseClientError where error.isTransport {
            // Unknown outcome: the same intent goes again on the next tap.
            update { $0.errorMessage = environment.message(for: error) }
        } catch {
            intents[key] = nil
            update { $0.errorMessage = environment.message(for: error) }
        }
        update { $0.isActing = false }
        let info = state.infoMessage, failure = state.errorMessage
        await load()
        update { $0.infoMessage = info; $0.errorMessage = failure ?? $0.errorMessage }
    }

    public func send() { onOutcome?(.send(to: chat.person)) }
    public func request() { onOutcome?(.request(from: chat.person)) }
    public func back() { onOutcome?(.back) }
}

extension GatehouseClientError {
    /// The request may or may not have reached the server.
    var isTransport: Bool { if case .transport = self { true } else { false } }
}
