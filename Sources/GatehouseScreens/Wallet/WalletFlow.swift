import Foundation
import GatehouseAPI
import GatehouseKit

/// The coordinator of the wallet app (the wallet spec): the way in (splash, login, recovery,
/// sign-up with a login and an email), then the profile with its steps (add info, add phone,
/// attach wallet), the dialogs, one dialog, and the send and request forms. It acts on the
/// screens' outcomes, so an iOS app (or the terminal demo) only draws `state.screen` and forwards
/// input to its view model. Navigation is immediate; a screen that shows server data (the
/// profile, the dialogs, a dialog, "Send money") loads it when the view calls its `load()` on
/// appearing, as a view controller does in `viewWillAppear`.
@MainActor
public final class WalletFlow: ScreenModel<WalletFlow.State> {
    /// The screen on display.
    public enum Screen: Equatable {
        /// The splash screen.
        case splash(SplashViewModel)
        /// Shows ``MessengerLoginViewModel``.
        case login(MessengerLoginViewModel)
        /// Shows ``ForgotPasswordViewModel``.
        case forgotPassword(ForgotPasswordViewModel)
        /// Shows ``MessengerRegistrationViewModel``.
        case registration(MessengerRegistrationViewModel)
        /// Shows ``WalletHomeViewModel``.
        case home(WalletHomeViewModel)
        /// Shows ``AddInfoViewModel``.
        case addInfo(AddInfoViewModel)
        /// Shows ``AddPhoneViewModel``.
        case addPhone(AddPhoneViewModel)
        /// Shows ``AttachWalletViewModel``.
        case attachWallet(AttachWalletViewModel)
        /// Shows ``WalletDialogsViewModel``.
        case dialogs(WalletDialogsViewModel)
        /// Shows ``WalletDialogViewModel``.
        case dialog(WalletDialogViewModel)
        /// Shows ``SendMoneyViewModel``.
        case send(SendMoneyViewModel)
        /// Shows ``RequestMoneyViewModel``.
        case request(RequestMoneyViewModel)
        /// Shows ``TopUpViewModel``.
        case topUp(TopUpViewModel)
        /// Shows ``DeleteAccountViewModel``.
        case deleteAccount(DeleteAccountViewModel)

        /// The same screen when it is the same view model.
        public static func == (a: Screen, b: Screen) -> Bool { a.model === b.model }

        /// The view model on screen.
        public var model: AnyObject {
            switch self {
            case .splash(let vm): vm
            case .login(let vm): vm
            case .forgotPassword(let vm): vm
            case .registration(let vm): vm
            case .home(let vm): vm
            case .addInfo(let vm): vm
            case .addPhone(let vm): vm
            case .attachWallet(let vm): vm
            case .dialogs(let vm): vm
            case .dialog(let vm): vm
            case .send(let vm): vm
            case .request(let vm): vm
            case .topUp(let vm): vm
            case .deleteAccount(let vm): vm
            }
        }
    }

    /// What the screen draws: every title, value and switch of its view.
    public struct State: Equatable {
        /// The screen on display: draw its view model.
        public var screen: Screen
    }

    /// The clients, words and device settings this uses.
    public let environment: WalletEnvironment
    /// Opens a payment provider's page in the app's browser (a top-up's "Pay").
    public var onOpenURL: ((URL) -> Void)?
    private var entry: AccountEntry!
    private var account: Account?
    private var live: RealtimeClient?
    private var liveTask: Task<Void, Never>?

    /// The wallet app's flow on `environment`; call ``launch()`` on launch.
    public init(environment: WalletEnvironment) {
        self.environment = environment
        super.init(state: State(screen: .splash(SplashViewModel(environment: environment.accounts))))
        entry = AccountEntry(environment: environment.accounts, show: { [unowned self] screen in
            switch screen {
            case .splash(let vm): update { $0.screen = .splash(vm) }
            case .login(let vm): update { $0.screen = .login(vm) }
            case .forgotPassword(let vm): update { $0.screen = .forgotPassword(vm) }
            case .registration(let vm): update { $0.screen = .registration(vm) }
            // The wallet's entry asks for no tag (payments find people by phone or email as well).
            case .chooseTag: break
            }
        }, enter: { [unowned self] account, _ in
            // Offline, the profile says it could not load and offers to try again: money needs the server.
            self.account = account
            showHome()
            startLive()
        })
        update { $0.screen = .splash(entry.makeSplash()) }
    }

    /// On launch: the splash screen checks the stored token and moves on.
    public func launch() async {
        guard case .splash(let splash) = state.screen else { return }
        await splash.start()
    }

    // MARK: Live

    /// Listens on `/v1/realtime` while signed in (the spec's "listening for new requests"): a
    /// payment, a request or a message for me reloads the screen on display, so the dialogs, a
    /// dialog's request cards and the balance change as the other side acts. Call once signed in
    /// (the flow calls it on entering); ``stopLive()`` on logout.
    public func startLive() {
        guard live == nil else { return }
        let client = RealtimeClient(core: environment.client.core)
        live = client
        liveTask = Task { [weak self] in
            for await update in client.updates() {
                guard let self else { return }
                switch update {
                case .event(let event) where event.kind.rawValue.hasPrefix("wallet.") || event.kind == .messageCreated:
                    await self.reloadVisible()
                case .resync:
                    await self.reloadVisible()
                case .sessionEnded:
                    return
                default:
                    break
                }
            }
        }
    }

    /// Stops listening: the client stops and its updates end, which ends the listening task (as
    /// `MessengerRepository` does; cancelling the task that reads the stream from here instead
    /// deadlocked the Swift runtime in a CI run, the stream's termination cancelling back into it).
    public func stopLive() async {
        let (client, task) = (live, liveTask)
        live = nil
        liveTask = nil
        await client?.stop()
        await task?.value
    }

    /// Reloads the screen on display when it shows server data.
    private func reloadVisible() async {
        switch state.screen {
        case .home(let vm): await vm.load()
        case .dialogs(let vm): await vm.load()
        case .dialog(let vm): await vm.load()
        case .topUp(let vm): await vm.refresh()
        default: break
        }
    }

    // MARK: Navigation

    /// The profile.
    public func showHome(info: String? = nil) {
        let home = WalletHomeViewModel(environment: environment, info: info)
        home.onOutcome = { [unowned self] outcome in
            switch outcome {
            case .addInfo(let account): showAddInfo(account)
            case .addPhone: showAddPhone()
            case .attachWallet(let account): showAttach(account)
            case .payments(let account): showDialogs(account)
            case .topUp: showTopUp()
            case .loggedOut:
                Task { await self.stopLive() }
                entry.showLogin()
            case .deleteAccount: showDeleteAccount()
            }
        }
        update { $0.screen = .home(home) }
    }

    private func showDeleteAccount() {
        let client = environment.client
        let vm = DeleteAccountViewModel(localizer: environment.localizer, timeZone: environment.accounts.timeZone,
                                        delete: { try await client.deleteAccount(currentPassword: $0) }, message: environment.message(for:))
        vm.onOutcome = { [unowned self] outcome in
            switch outcome {
            case .cancelled: back()
            case .deleted(_, let notice):
                Task { await self.stopLive() }
                entry.showLogin(notice: notice)
            }
        }
        update { $0.screen = .deleteAccount(vm) }
    }

    private func back(with info: String? = nil) { showHome(info: info) }

    private func showAddInfo(_ account: Account) {
        let vm = AddInfoViewModel(environment: environment, account: account)
        vm.onOutcome = { [unowned self] outcome in
            switch outcome {
            case .saved: back(with: environment.localizer("wallet.info.saved"))
            case .back: back()
            }
        }
        update { $0.screen = .addInfo(vm) }
    }

    private func showAddPhone() {
        let vm = AddPhoneViewModel(environment: environment)
        vm.onOutcome = { [unowned self] outcome in
            switch outcome {
            case .verified(let account): back(with: environment.localizer("wallet.phone.verified", account.phone ?? ""))
            case .back: back()
            }
        }
        update { $0.screen = .addPhone(vm) }
    }

    private func showTopUp() {
        let vm = TopUpViewModel(environment: environment)
        vm.onOpen = { [unowned self] url in onOpenURL?(url) }
        vm.onOutcome = { [unowned self] _ in back() }
        update { $0.screen = .topUp(vm) }
    }

    private func showAttach(_ account: Account) {
        let vm = AttachWalletViewModel(environment: environment, account: account)
        vm.onOutcome = { [unowned self] outcome in
            switch outcome {
            case .attached(let wallet): back(with: environment.localizer("wallet.attach.done", wallet.phone))
            case .back: back()
            }
        }
        update { $0.screen = .attachWallet(vm) }
    }

    /// Opening a push (``PushRoute``): money received or a money request lands on the dialog with
    /// the other person. Answers whether it was the wallet's to open (a message is the messenger's).
    @discardableResult
    public func open(_ route: PushRoute) async -> Bool {
        guard let account else { return false }
        let other: UUID
        do {
            switch route {
            case .walletTransfer(let id):
                let transfer = try await environment.wallet.transfer(id)
                if let from = transfer.from, from.id != account.id {
                    other = from.id
                } else if transfer.to.id != account.id {
                    other = transfer.to.id
                } else {
                    // A top-up: nobody to talk to; the dialogs list shows the balance.
                    showDialogs(account)
                    return true
                }
            case .moneyRequest(let id):
                let request = try await environment.wallet.request(id)
                other = request.requester.id == account.id ? request.payer.id : request.requester.id
            case .chat, .friends:
                return false
            }
            showDialog(try await environment.messenger.openChat(with: other))
            return true
        } catch {
            showDialogs(account)
            return true
        }
    }

    /// The dialogs.
    public func showDialogs(_ account: Account) {
        self.account = account
        let vm = WalletDialogsViewModel(environment: environment, account: account)
        vm.onOutcome = { [unowned self] outcome in
            switch outcome {
            case .open(let chat): showDialog(chat)
            case .send: showSend(recipient: "")
            case .request: showRequest(recipient: "")
            case .back: back()
            }
        }
        update { $0.screen = .dialogs(vm) }
    }

    private func showDialog(_ chat: Chat) {
        guard let account else { return }
        let vm = WalletDialogViewModel(environment: environment, account: account, chat: chat)
        vm.onOutcome = { [unowned self] outcome in
            switch outcome {
            case .send(let person): showSend(recipient: "@" + person.tag, returnTo: chat)
            case .request(let person): showRequest(recipient: "@" + person.tag, returnTo: chat)
            case .back: showDialogs(account)
            }
        }
        update { $0.screen = .dialog(vm) }
    }

    private func showSend(recipient: String, returnTo chat: Chat? = nil) {
        let vm = SendMoneyViewModel(environment: environment, recipient: recipient)
        vm.onOutcome = { [unowned self] outcome in
            if case .back = outcome { leaveForm(to: chat) }
        }
        update { $0.screen = .send(vm) }
    }

    private func showRequest(recipient: String, returnTo chat: Chat? = nil) {
        let vm = RequestMoneyViewModel(environment: environment, recipient: recipient)
        vm.onOutcome = { [unowned self] outcome in
            if case .back = outcome { leaveForm(to: chat) }
        }
        update { $0.screen = .request(vm) }
    }

    /// Back from a form: to the dialog it was opened from, or to the dialogs.
    private func leaveForm(to chat: Chat?) {
        guard let account else { return }
        if let chat { showDialog(chat) } else { showDialogs(account) }
    }
}
