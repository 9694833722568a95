import Foundation
import GatehouseAPI
import GatehouseKit

/// What "Send money" and "Request money" share: the person (a phone, a tag or an email, as typed),
/// the amount in roubles and kopecks ("250", "250,50", "1 000.5"), the comment; the check of the
/// amount; the look-up that shows the person's name before anything is sent; and the intent
/// that makes a retried "Confirm" pay once.
@MainActor
final class PaymentForm {
    let environment: WalletEnvironment
    /// The intent of the payment on the confirm step; a new one once it is answered or edited.
    private(set) var intent = PaymentIntent()
    private(set) var recipient: WalletParty?

    init(environment: WalletEnvironment) {
        self.environment = environment
    }

    /// A typed person as the API names them: an email, a phone, else a tag.
    static func reference(_ typed: String) -> PartyReference? {
        let text = typed.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else { return nil }
        if InputRules.isEmail(text) { return PartyReference(email: text) }
        if InputRules.isPhone(text) { return PartyReference(phone: text) }
        return PartyReference(tag: text)
    }

    /// The amount in kopecks, or why not.
    func amount(_ typed: String, limit: Int64? = nil) -> (Int64?, String?) {
        let text = typed.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else { return (nil, nil) }
        let l = environment.localizer
        guard let kopecks = Kopecks.parse(text) else { return (nil, l("wallet.form.badAmount")) }
        guard kopecks > 0 else { return (nil, l("wallet.form.zeroAmount")) }
        if let limit, kopecks > limit { return (nil, l("wallet.form.notEnough", WalletFormat.money(limit, l))) }
        return (kopecks, nil)
    }

    /// Looks the person up (the name for the confirm step).
    func lookUp(_ typed: String) async throws -> WalletParty {
        guard let reference = Self.reference(typed) else { throw GatehouseClientError.rejected(code: .recipientNotFound, message: environment.localizer("wallet.form.noRecipient")) }
        let party = try await environment.wallet.recipient(reference)
        recipient = party
        return party
    }

    /// The form changed: whatever is confirmed next is a new intent.
    func edited() {
        intent = PaymentIntent()
        recipient = nil
    }

    /// "Continue": looks the person up; their name and tag for the confirm step's question.
    func review(_ typed: String) async throws -> String {
        let party = try await lookUp(typed)
        return party.displayName + (party.tag.map { " (@\($0))" } ?? "")
    }

    /// The person confirmed on the confirm step, as the API names them: by the tag looked up,
    /// so the name confirmed is the one paid.
    func confirmed(_ typed: String) -> PartyReference? {
        recipient.flatMap { party in party.tag.map { PartyReference(tag: $0) } } ?? Self.reference(typed)
    }

    /// What "Confirm" came to.
    enum Outcome<T> {
        case done(T)
        /// Maybe done, maybe not (the answer was lost): "Confirm" again sends the same intent, which cannot pay twice.
        case unknown(String?)
        /// Refused: the person corrects the form; the next try is a new intent.
        case refused(String?)
    }

    /// Sends the intent with `call`; a new intent afterwards unless the answer was lost.
    func submit<T>(_ call: (PaymentIntent) async throws -> T) async -> Outcome<T> {
        do {
            let value = try await call(intent)
            intent = PaymentIntent()
            return .done(value)
        } catch let error as GatehouseClientError where error.isTransport {
            return .unknown(environment.message(for: error))
        } catch {
            intent = PaymentIntent()
            return .refused(environment.message(for: error))
        }
    }
}

/// Where a payment form stands.
public enum PaymentStep: Equatable, Sendable {
    /// Typing the person, the amount, the comment.
    case form
    /// The person's name and the amount, to confirm.
    case confirm
    /// Done: what happened, in words.
    case done
}

/// What a payment form's state has (``SendMoneyViewModel/State``, ``RequestMoneyViewModel/State``): the person, the
/// amount and the comment as typed, the step, and what the buttons and messages show.
public protocol PaymentFormState: Equatable, Sendable {
    /// The form, the confirmation, or done.
    var step: PaymentStep { get set }
    /// The person as typed (a phone, `@tag` or email).
    var recipient: String { get set }
    /// The amount as typed, in roubles.
    var amount: String { get set }
    /// The comment as typed.
    var comment: String { get set }
    /// Why the amount is not accepted yet; nil when it is.
    var amountError: String? { get set }
    /// The confirm step's question.
    var confirmText: String { get set }
    /// What was done.
    var doneText: String { get set }
    /// Whether "continue" works now.
    var isContinueEnabled: Bool { get set }
    /// Whether "confirm" works now.
    var isConfirmEnabled: Bool { get set }
    /// A call is in flight: show progress and keep the buttons off.
    var isLoading: Bool { get set }
    /// Why the last action failed, in the person's language; nil when nothing failed.
    var errorMessage: String? { get set }
}

/// The one payment form the wallet's "Send money" and "Request money" are: the person, the amount (checked in
/// roubles and kopecks) and the comment; "Continue" looks the person up and asks to confirm with their name;
/// "Confirm" sends with one intent, so a second tap or a retry after a lost answer does it once; "Change" goes back
/// to the form. What differs (the amount's limit, the question, the call and what it did) is each screen's.
@MainActor
public class PaymentFormViewModel<State: PaymentFormState>: ScreenModel<State> {
    let form: PaymentForm

    init(environment: WalletEnvironment, state: State) {
        self.form = PaymentForm(environment: environment)
        super.init(state: state)
    }

    var l: Localizer { form.environment.localizer }

    /// The most the amount may be (the balance, for a payment); nil for none.
    var amountLimit: Int64? { nil }

    /// The confirm step's question, once the person is found.
    func question(kopecks: Int64, who: String) -> String { "" }

    /// Sends what was confirmed (with the form's intent, `PaymentForm.submit`); when done, sets the done step and
    /// tells the flow.
    func send(to: PartyReference, name: String, kopecks: Int64, comment: String?) async -> PaymentForm.Outcome<Void> { .refused(nil) }

    /// Whom to pay or ask, as typed.
    public func setRecipient(_ text: String) { edit { $0.recipient = text } }
    /// The amount as typed (checked in roubles and kopecks).
    public func setAmount(_ text: String) { edit { $0.amount = text } }
    /// The comment as typed.
    public func setComment(_ text: String) { edit { $0.comment = text } }
    /// "Change": back to the form from the confirm step.
    public func editAgain() { edit { _ in } }

    func edit(_ change: (inout State) -> Void) {
        form.edited()
        update { change(&$0); $0.step = .form; $0.errorMessage = nil }
        revalidate()
    }

    func revalidate() {
        let (kopecks, problem) = form.amount(state.amount, limit: amountLimit)
        update {
            $0.amountError = problem
            $0.isContinueEnabled = !$0.isLoading && $0.step == .form && kopecks != nil && PaymentForm.reference($0.recipient) != nil
            $0.isConfirmEnabled = !$0.isLoading && $0.step == .confirm
        }
    }

    /// "Continue": the person's name and the amount to confirm.
    public func review() async {
        guard state.isContinueEnabled, let kopecks = form.amount(state.amount, limit: amountLimit).0 else { return }
        update { $0.isLoading = true; $0.errorMessage = nil }
        revalidate()
        do {
            let who = try await form.review(state.recipient)
            let question = question(kopecks: kopecks, who: who)
            update { $0.isLoading = false; $0.step = .confirm; $0.confirmText = question }
        } catch {
            update { $0.isLoading = false; $0.errorMessage = form.environment.message(for: error) }
        }
        revalidate()
    }

    /// "Confirm": sends it.
    public func confirm() async {
        guard state.isConfirmEnabled, let name = form.recipient?.displayName, let to = form.confirmed(state.recipient),
              let kopecks = form.amount(state.amount).0 else { return }
        update { $0.isLoading = true; $0.errorMessage = nil }
        revalidate()
        let comment = state.comment.trimmingCharacters(in: .whitespacesAndNewlines)
        switch await send(to: to, name: name, kopecks: kopecks, comment: comment.isEmpty ? nil : comment) {
        case .done:
            break
        case .unknown(let message):
            update { $0.isLoading = false; $0.errorMessage = message }
        case .refused(let message):
            update { $0.isLoading = false; $0.step = .form; $0.errorMessage = message }
        }
        revalidate()
    }
}

/// The spec's "Send money": to whom, how much, a comment; "Continue" shows the person's name and
/// the amount to confirm; "Confirm" sends with one intent, so a second tap or a retry after a lost
/// answer pays once.
@MainActor
public final class SendMoneyViewModel: PaymentFormViewModel<SendMoneyViewModel.State> {
    /// What the screen draws: every title, value and switch of its view.
    public struct State: PaymentFormState {
        /// The screen's title.
        public var title: String
        /// Labels by name: `recipient`, `amount`, `comment`, `continue`, `confirm`, `edit`, `back`.
        public var labels: [String: String]
        /// The form, the confirmation, or done.
        public var step: PaymentStep = .form
        /// Whom to pay, as typed (a phone, `@tag` or email).
        public var recipient = ""
        /// The amount as typed, in roubles.
        public var amount = ""
        /// The comment as typed.
        public var comment = ""
        /// Why the amount is not accepted yet; nil when it is.
        public var amountError: String?
        /// My balance, shown above the form.
        public var balance = ""
        /// "Send 250,50 ₽ to Bob Ray (@bob.ray)?": the confirm step's question.
        public var confirmText = ""
        /// What was done ("Sent 250.50 ₽ to Bob. Balance: …").
        public var doneText = ""
        /// Whether "continue" works now.
        public var isContinueEnabled = false
        /// Whether "confirm" works now.
        public var isConfirmEnabled = false
        /// A call is in flight: show progress and keep the buttons off.
        public var isLoading = false
        /// Why the last action failed, in the person's language; nil when nothing failed.
        public var errorMessage: String?
    }

    /// Where the screen leads; the flow acts on it.
    public enum Outcome: Equatable, Sendable {
        /// The money went (the transfer and my balance).
        case sent(TransferResult)
        /// Back to the previous screen.
        case back
    }
    /// Called with the screen's outcome (the flow sets it).
    public var onOutcome: ((Outcome) -> Void)?
    private var balance: Int64?

    /// The form on `environment`'s wallet client.
    ///
    /// - Parameter recipient: pre-filled from a dialog (the person's tag).
    public init(environment: WalletEnvironment, recipient: String = "") {
        let l = environment.localizer
        let labels = Dictionary(uniqueKeysWithValues: ["recipient", "amount", "comment", "continue", "confirm", "edit", "back"].map { ($0, l("wallet.send.\($0)")) })
        super.init(environment: environment, state: State(title: l("wallet.send.title"), labels: labels, recipient: recipient))
    }

    override var amountLimit: Int64? { balance }

    /// Loads the balance (the amount is checked against it).
    public func load() async {
        do {
            let wallet = try await form.environment.wallet.wallet()
            balance = wallet.balance
            update { $0.balance = WalletFormat.money(wallet.balance, l) }
        } catch {
            update { $0.errorMessage = form.environment.message(for: error) }
        }
        revalidate()
    }

    override func question(kopecks: Int64, who: String) -> String {
        l("wallet.send.question", WalletFormat.money(kopecks, l), who)
    }

    override func send(to: PartyReference, name: String, kopecks: Int64, comment: String?) async -> PaymentForm.Outcome<Void> {
        let wallet = form.environment.wallet
        switch await form.submit({ try await wallet.send(NewTransfer(to: to, amount: kopecks, comment: comment), intent: $0) }) {
        case .done(let result):
            balance = result.balance
            update {
                $0.isLoading = false
                $0.step = .done
                $0.balance = WalletFormat.money(result.balance, l)
                $0.doneText = l("wallet.send.done", WalletFormat.money(kopecks, l), name, WalletFormat.money(result.balance, l))
            }
            onOutcome?(.sent(result))
            return .done(())
        case .unknown(let message): return .unknown(message)
        case .refused(let message): return .refused(message)
        }
    }

    /// "Back": leaves the screen.
    public func back() { onOutcome?(.back) }
}

/// The spec's "request money" (their "later"): whom to ask, how much, an invoice or a loan, a
/// comment; "Continue" shows the person's name; "Confirm" sends the request with one intent.
@MainActor
public final class RequestMoneyViewModel: PaymentFormViewModel<RequestMoneyViewModel.State> {
    /// What the screen draws: every title, value and switch of its view.
    public struct State: PaymentFormState {
        /// The screen's title.
        public var title: String
        /// Labels by name: `recipient`, `amount`, `comment`, `kind`, `continue`, `confirm`, `edit`, `back`.
        public var labels: [String: String]
        /// The form, the confirmation, or done.
        public var step: PaymentStep = .form
        /// Whom to ask, as typed (a phone, `@tag` or email).
        public var recipient = ""
        /// The amount as typed, in roubles.
        public var amount = ""
        /// The comment as typed.
        public var comment = ""
        /// An invoice or a loan.
        public var kind: MoneyRequestKind = .invoice
        /// The kinds' names.
        public var kindTitles: [MoneyRequestKind: String]
        /// Why the amount is not accepted yet; nil when it is.
        public var amountError: String?
        /// The confirmation's question ("Ask Bob for 100.00 ₽ (loan)?").
        public var confirmText = ""
        /// What was done.
        public var doneText = ""
        /// Whether "continue" works now.
        public var isContinueEnabled = false
        /// Whether "confirm" works now.
        public var isConfirmEnabled = false
        /// A call is in flight: show progress and keep the buttons off.
        public var isLoading = false
        /// Why the last action failed, in the person's language; nil when nothing failed.
        public var errorMessage: String?
    }

    /// Where the screen leads; the flow acts on it.
    public enum Outcome: Equatable, Sendable {
        /// The request went.
        case requested(MoneyRequest)
        /// Back to the previous screen.
        case back
    }
    /// Called with the screen's outcome (the flow sets it).
    public var onOutcome: ((Outcome) -> Void)?

    /// The form, with whom to ask filled in when known (from a dialog).
    ///
    /// - Parameter recipient: pre-filled from a dialog (the person's tag).
    public init(environment: WalletEnvironment, recipient: String = "") {
        let l = environment.localizer
        let labels = Dictionary(uniqueKeysWithValues: ["recipient", "amount", "comment", "kind", "continue", "confirm", "edit", "back"].map { ($0, l("wallet.ask.\($0)")) })
        super.init(environment: environment, state: State(title: l("wallet.ask.title"), labels: labels, recipient: recipient,
                                kindTitles: Dictionary(uniqueKeysWithValues: MoneyRequestKind.allCases.map { ($0, l("wallet.kind.\($0.rawValue)")) })))
    }

    /// An invoice or a loan.
    public func setKind(_ kind: MoneyRequestKind) { edit { $0.kind = kind } }

    override func question(kopecks: Int64, who: String) -> String {
        l("wallet.ask.question", who, WalletFormat.money(kopecks, l), state.kindTitles[state.kind] ?? "")
    }

    override func send(to from: PartyReference, name: String, kopecks: Int64, comment: String?) async -> PaymentForm.Outcome<Void> {
        let (wallet, kind) = (form.environment.wallet, state.kind)
        switch await form.submit({ try await wallet.ask(NewMoneyRequest(from: from, amount: kopecks, kind: kind, comment: comment), intent: $0) }) {
        case .done(let request):
            update { $0.isLoading = false; $0.step = .done; $0.doneText = l("wallet.ask.done", name, WalletFormat.money(kopecks, l)) }
            onOutcome?(.requested(request))
            return .done(())
        case .unknown(let message): return .unknown(message)
        case .refused(let message): return .refused(message)
        }
    }

    /// "Back": leaves the screen.
    public func back() { onOutcome?(.back) }
}

/// "Top up": money into my wallet through the server's payment provider. The person types an
/// amount; "Pay" starts the top-up and hands its payment page to the app (``onOpen``: on iOS an
/// `SFSafariViewController`); back from the page (or when the flow hears `wallet.transfer`),
/// ``refresh()`` shows whether it is paid. One intent per top-up: a lost answer is retried
/// without starting a second payment.
@MainActor
public final class TopUpViewModel: ScreenModel<TopUpViewModel.State> {
    /// Where the screen is.
    public enum Step: Equatable, Sendable {
        /// Typing the amount.
        case form
        /// The provider's page is open (or can be opened again): waiting for the payment.
        case paying(URL)
        /// Paid and credited.
        case paid
        /// The page was abandoned or expired: nothing was charged.
        case expired
    }

    /// What the screen draws: every title, value and switch of its view.
    public struct State: Equatable, Sendable {
        /// The screen's title.
        public var title: String
        /// `amount`, `pay`, `open`, `check`, `again`, `back`, `hint`.
        public var labels: [String: String]
        /// Where the top-up stands.
        public var step: Step = .form
        /// The amount as typed, in roubles.
        public var amount = ""
        /// Why the amount is not accepted yet; nil when it is.
        public var amountError: String?
        /// What the step says: "Waiting for the payment of 500.00 ₽…", "The wallet is topped up…".
        public var statusText = ""
        /// Whether "pay" works now.
        public var isPayEnabled = false
        /// A call is in flight: show progress and keep the buttons off.
        public var isLoading = false
        /// Why the last action failed, in the person's language; nil when nothing failed.
        public var errorMessage: String?
    }

    /// Where the screen leads; the flow acts on it.
    public enum Outcome: Equatable, Sendable {
        /// Back to the previous screen.
        case back
    }
    /// Called with the screen's outcome (the flow sets it).
    public var onOutcome: ((Outcome) -> Void)?
    /// Opens the provider's payment page (the app's browser).
    public var onOpen: ((URL) -> Void)?

    private let environment: WalletEnvironment
    private let form: PaymentForm
    private var intent = PaymentIntent()
    private var topUp: TopUp?
    private var checking: Task<Void, Never>?

    /// The screen on `environment`'s wallet client and words.
    public init(environment: WalletEnvironment) {
        self.environment = environment
        self.form = PaymentForm(environment: environment)
        let l = environment.localizer
        let labels = Dictionary(uniqueKeysWithValues: ["amount", "pay", "open", "check", "again", "back", "hint"].map { ($0, l("wallet.topUp.\($0)")) })
        super.init(state: State(title: l("wallet.topUp.title"), labels: labels))
    }

    /// The amount as typed (checked in roubles and kopecks); a new amount is a new intent.
    public func setAmount(_ text: String) {
        guard state.step == .form else { return }
        intent = PaymentIntent()
        let (kopecks, problem) = form.amount(text)
        update {
            $0.amount = text
            $0.amountError = problem
            $0.errorMessage = nil
            $0.isPayEnabled = kopecks != nil && !$0.isLoading
        }
    }

    /// "Pay": starts the top-up and opens its page.
    public func pay() async {
        guard state.isPayEnabled, !state.isLoading, let kopecks = form.amount(state.amount).0 else { return }
        update { $0.isLoading = true; $0.isPayEnabled = false; $0.errorMessage = nil }
        do {
            let started = try await environment.wallet.startTopUp(amount: kopecks, intent: intent)
            topUp = started
            show(started)
            if case .paying(let url) = state.step { onOpen?(url) }
        } catch {
            update { $0.isLoading = false; $0.isPayEnabled = true; $0.errorMessage = environment.message(for: error) }
        }
    }

    /// "Open the payment page" again (the person closed it before paying).
    public func openPage() {
        if case .paying(let url) = state.step { onOpen?(url) }
    }

    /// "Check": asks the server whether the top-up is paid (call when the app comes back from the page).
    /// One check runs at a time: a second call (the person's "Check" while the flow's live update is
    /// checking) waits for the running one, so it returns to a screen that already shows the answer.
    public func refresh() async {
        if let running = checking { return await running.value }
        guard let current = topUp, case .paying = state.step else { return }
        let check = Task { await self.check(current) }
        checking = check
        await check.value
        checking = nil
    }

    private func check(_ current: TopUp) async {
        update { $0.isLoading = true; $0.errorMessage = nil }
        do {
            let fresh = try await environment.wallet.topUp(current.id)
            // Paid: the balance is read first, so the screen turns to "paid" once, with the balance in it.
            let balance = fresh.state == .paid ? (try? await environment.wallet.wallet())?.balance : nil
            topUp = fresh
            show(fresh, balance: balance)
        } catch {
            update { $0.isLoading = false; $0.errorMessage = environment.message(for: error) }
        }
    }

    /// "Another top-up": back to the form with a new intent.
    public func startAgain() {
        intent = PaymentIntent()
        topUp = nil
        update { $0.step = .form; $0.statusText = ""; $0.errorMessage = nil }
        setAmount(state.amount)
    }

    /// "Back": leaves the screen.
    public func back() { onOutcome?(.back) }

    private func show(_ topUp: TopUp, balance: Int64? = nil) {
        let l = environment.localizer
        update {
            $0.isLoading = false
            switch topUp.state {
            case .pending:
                if let url = topUp.confirmationUrl.flatMap(URL.init(string:)) {
                    $0.step = .paying(url)
                    $0.statusText = l("wallet.topUp.waiting", WalletFormat.money(topUp.amount, l))
                }
            case .paid:
                $0.step = .paid
                $0.statusText = balance.map { l("wallet.topUp.paid", WalletFormat.money(topUp.amount, l), WalletFormat.money($0, l)) }
                    ?? l("wallet.topUp.done", WalletFormat.money(topUp.amount, l))
            case .expired:
                $0.step = .expired
                $0.statusText = l("wallet.topUp.expired")
            }
        }
    }
}
