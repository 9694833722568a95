import Foundation
import GatehouseAPI
import GatehouseKit

/// The spec's dialogs list: my balance and my chats, each with its last message (a transfer or a
/// request reads as one: "You sent 250,50 ₽"), newest first, plus "Send money" and "Request money"
/// to someone new.
@MainActor
public final class WalletDialogsViewModel: ScreenModel<WalletDialogsViewModel.State> {
    /// One dialog of the list.
    public struct Row: Equatable, Sendable, Identifiable {
        /// Its id.
        public var id: UUID
        /// The name shown.
        public var name: String
        /// The last message as a payment line ("You sent 250.50 ₽ · concert").
        public var preview: String
        /// Whether it holds messages I have not read.
        public var unread: Bool
    }

    /// What the screen draws: every title, value and switch of its view.
    public struct State: Equatable, Sendable {
        /// The screen's title.
        public var title: String
        /// The balance's label.
        public var balanceLabel: String
        /// My balance ("1 000.00 ₽").
        public var balance = ""
        /// The rows, in the order shown.
        public var rows: [Row] = []
        /// What an empty list says.
        public var emptyText: String
        /// The "send" button's title.
        public var sendTitle: String
        /// The "request" button's title.
        public var requestTitle: String
        /// The "back" button's title.
        public var backTitle: String
        /// A call is in flight: show progress and keep the buttons off.
        public var isLoading = false
        /// Why the last action failed, in the person's language; nil when nothing failed.
        public var errorMessage: String?
    }

    /// Where the screen leads; the flow acts on it.
    public enum Outcome: Equatable, Sendable {
        /// Opens a dialog.
        case open(Chat)
        /// "Send money".
        case send
        /// "Request money".
        case request
        /// Back to the previous screen.
        case back
    }

    /// Called with the screen's outcome (the flow sets it).
    public var onOutcome: ((Outcome) -> Void)?
    private let environment: WalletEnvironment
    private let account: Account
    private var chats: [Chat] = []

    /// The dialogs of `account`.
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

    /// Opens a dialog.
    public func open(_ id: UUID) { if let chat = chats.first(where: { $0.id == id }) { onOutcome?(.open(chat)) } }
    /// "Send money".
    public func send() { onOutcome?(.send) }
    /// "Request money".
    public func request() { onOutcome?(.request) }
    /// "Back": leaves the screen.
    public func back() { onOutcome?(.back) }
}

/// One dialog: the messages, transfers and requests between me and one person, oldest first,
/// my balance, and the actions each request allows me now (pay, decline, cancel, repay) as the
/// server's state says. "Send money" and "Request money" open the forms for this person.
@MainActor
public final class WalletDialogViewModel: ScreenModel<WalletDialogViewModel.State> {
    /// What a request card offers me.
    public enum Action: String, Equatable, Sendable, CaseIterable {
        /// Pay the request (the payer).
        case confirm
        /// Decline it (the payer).
        case decline
        /// Cancel it (the requester).
        case cancel
        /// Repay a paid loan in full (the borrower).
        case repay
    }

    /// One message of the dialog: a payment card or text.
    public struct Item: Equatable, Sendable, Identifiable {
        /// Its id.
        public var id: UUID
        /// Whether I wrote it.
        public var mine: Bool
        /// The message's text, or the payment's line ("Ann asks you for 100,00 ₽ (loan)").
        public var text: String
        /// The comment of a payment.
        public var comment: String?
        /// For a request: its current state, in words ("open", "paid", …).
        public var requestState: String?
        /// The money request it is the card of, if any.
        public var requestID: UUID?
        /// The actions the request allows me now, with their labels.
        public var actions: [Action] = []
        /// When it was written.
        public var time: String
    }

    /// What the screen draws: every title, value and switch of its view.
    public struct State: Equatable, Sendable {
        /// The screen's title.
        public var title: String
        /// The balance's label.
        public var balanceLabel: String
        /// My balance.
        public var balance = ""
        /// The items, in the order shown.
        public var items: [Item] = []
        /// Labels of the request actions.
        public var actionTitles: [Action: String]
        /// The "send" button's title.
        public var sendTitle: String
        /// The "request" button's title.
        public var requestTitle: String
        /// The "back" button's title.
        public var backTitle: String
        /// True while the dialog loads (a live reload too).
        public var isLoading = false
        /// True while an action on a request is in flight: the cards' buttons show progress.
        public var isActing = false
        /// Why the last action failed, in the person's language; nil when nothing failed.
        public var errorMessage: String?
        /// A neutral notice (what the last step did).
        public var infoMessage: String?
    }

    /// Where the screen leads; the flow acts on it.
    public enum Outcome: Equatable, Sendable {
        /// "Send money" to the other person.
        case send(to: Person)
        /// "Request money" from the other person.
        case request(from: Person)
        /// Back to the previous screen.
        case back
    }

    /// Called with the screen's outcome (the flow sets it).
    public var onOutcome: ((Outcome) -> Void)?
    private let environment: WalletEnvironment
    private let account: Account
    /// The chat it shows.
    public let chat: Chat
    /// One intent per request and action, kept until it is answered: a repeated tap, or a retry
    /// after a lost answer, pays once.
    private var intents: [String: PaymentIntent] = [:]

    /// The dialog of `account` in `chat`.
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

    /// "Send money" to the other person.
    public func send() { onOutcome?(.send(to: chat.person)) }
    /// "Request money" from the other person.
    public func request() { onOutcome?(.request(from: chat.person)) }
    /// "Back": leaves the screen.
    public func back() { onOutcome?(.back) }
}

extension GatehouseClientError {
    /// The request may or may not have reached the server.
    var isTransport: Bool { if case .transport = self { true } else { false } }
}
