import Foundation
import GatehouseKit
import GatehouseSignature

/// The Sign To Login app's coordinator: splash → (remembered person) documents, or start →
/// register (profile form → enrolment) / log in (email → signature or enrolment) → documents →
/// viewer → history; a deep link opens a history. The UI shows `state.screen`'s model.
@MainActor
public final class SignToLoginFlow: ScreenModel<SignToLoginFlow.State> {
    /// The screen on display.
    public enum Screen {
        /// The splash screen.
        case splash
        /// The start screen: "Register" and "Log in", with an error brought back from logging in.
        case start(message: String?)
        /// Shows ``ProfileFormViewModel``.
        case profile(ProfileFormViewModel)
        /// Shows ``EnrolmentViewModel``.
        case enrolment(EnrolmentViewModel)
        /// Shows ``SignInViewModel``.
        case signIn(SignInViewModel)
        /// Shows ``AuthenticateViewModel``.
        case authenticate(AuthenticateViewModel)
        /// Shows ``DocumentsViewModel``.
        case documents(DocumentsViewModel)
        /// Shows ``DocumentViewerViewModel``.
        case viewer(DocumentViewerViewModel)
        /// Shows ``SigningHistoryViewModel``.
        case history(SigningHistoryViewModel)
    }

    /// What the screen draws: every title, value and switch of its view.
    public struct State: Equatable {
        /// The screen on display: draw its view model.
        public var screen: Screen
        /// The start screen's title.
        public var startTitle: String
        /// The "Register" button's title.
        public var registerTitle: String
        /// The "Log in" button's title.
        public var loginTitle: String

        /// Screens compare by kind and model identity (a new model is a new screen).
        public static func == (a: State, b: State) -> Bool {
            a.startTitle == b.startTitle && a.screen.identity == b.screen.identity
        }
    }

    /// The clients, words and device settings this uses.
    public let environment: SignToLoginEnvironment
    /// The person signed in on this device.
    public private(set) var email: String?
    private var pendingLink: URL?

    /// The app's flow on `environment`; call ``start()`` on launch.
    public init(environment: SignToLoginEnvironment) {
        self.environment = environment
        let l = environment.localizer
        super.init(state: State(screen: .splash, startTitle: l("stl.start.title"), registerTitle: l("stl.start.register"), loginTitle: l("stl.start.login")))
    }

    /// The splash: at least `splashSeconds`, then the documents for a remembered person, else the start.
    public func start() async {
        await environment.sleep(environment.splashSeconds)
        if let remembered = environment.rememberedProfile {
            email = remembered.email
            if let link = pendingLink { pendingLink = nil; openLink(link) } else { showDocuments() }
        } else {
            show(.start(message: nil))
        }
    }

    /// "Register" on the start screen.
    public func register() { showProfile(environment.rememberedProfile) }

    /// The profile form, filled with `profile`; "Next" goes to enrolment, "Back" to the start.
    func showProfile(_ profile: SignToLoginProfile?) {
        let model = ProfileFormViewModel(localizer: environment.localizer, remembered: profile)
        model.onOutcome = { [weak self] outcome in
            switch outcome {
            case .enrol(let profile): self?.enrol(profile)
            case .back: self?.show(.start(message: nil))
            }
        }
        show(.profile(model))
    }

    /// "Log in" on the start screen.
    public func logIn() {
        let model = SignInViewModel(environment: environment)
        model.onOutcome = { [weak self] outcome in
            guard let self else { return }
            switch outcome {
            case .authenticate(let email): authenticate(email)
            case .enrol(let email):
                // The account exists without a model from this device: the profile form, then enrolment.
                let remembered = environment.rememberedProfile
                showProfile(remembered?.email == email ? remembered : SignToLoginProfile(email: email, userName: ""))
            case .unknownUser(let message): show(.start(message: message))
            }
        }
        show(.signIn(model))
    }

    func enrol(_ profile: SignToLoginProfile) {
        let model = EnrolmentViewModel(environment: environment, profile: profile)
        model.onOutcome = { [weak self] outcome in
            guard let self else { return }
            switch outcome {
            case .enrolled(let remembered):
                email = remembered.email
                showDocuments(notice: environment.localizer("stl.enrol.done"))
            case .cancelled:
                showProfile(profile)
            }
        }
        show(.enrolment(model))
    }

    func authenticate(_ email: String) {
        let model = AuthenticateViewModel(environment: environment, email: email)
        model.onOutcome = { [weak self] outcome in
            guard let self else { return }
            switch outcome {
            case .authenticated:
                self.email = email
                let known = environment.rememberedProfile
                environment.remember(known?.email == email ? known : SignToLoginProfile(email: email, userName: known?.userName ?? ""))
                showDocuments()
            case .enrolmentRequired: enrol(SignToLoginProfile(email: email, userName: environment.rememberedProfile?.userName ?? ""))
            case .unknownUser: show(.start(message: environment.localizer("stl.login.unknown", email)))
            }
        }
        show(.authenticate(model))
    }

    /// The documents; `notice` is an alert over them until dismissed ("Образец создан" after an enrolment).
    public func showDocuments(notice: String? = nil) {
        let model = DocumentsViewModel(environment: environment, notice: notice)
        model.onOpen = { [weak self] url in self?.openDocument(url) }
        show(.documents(model))
    }

    /// Opens a document of the folder in the viewer.
    public func openDocument(_ url: URL) {
        guard let email else { return }
        let model = DocumentViewerViewModel(environment: environment, email: email, url: url)
        model.onShowHistory = { [weak self] history in self?.show(.history(history)) }
        show(.viewer(model))
    }

    /// A PDF handed over by another app: copied into the documents and opened.
    public func openFile(_ url: URL) {
        guard email != nil else { return }
        let documents = DocumentsViewModel(environment: environment)
        documents.onOpen = { [weak self] url in self?.openDocument(url) }
        documents.importDocument(from: url)
    }

    /// `stl://user/?documentid=…` (from the history page): the history, once someone is signed in.
    @discardableResult
    public func openLink(_ url: URL) -> Bool {
        guard let email else {
            pendingLink = url
            return SigningHistoryViewModel.opening(url, environment: environment, email: "") != nil
        }
        guard let model = SigningHistoryViewModel.opening(url, environment: environment, email: email) else { return false }
        show(.history(model))
        return true
    }

    /// Logs out on this device: the remembered person is forgotten.
    public func logOut() {
        environment.remember(nil)
        email = nil
        show(.start(message: nil))
    }

    private func show(_ screen: Screen) { update { $0.screen = screen } }
}

extension SignToLoginFlow.Screen {
    var identity: String {
        switch self {
        case .splash: "splash"
        case .start(let message): "start:\(message ?? "")"
        case .profile(let m): "profile:\(ObjectIdentifier(m).hashValue)"
        case .enrolment(let m): "enrolment:\(ObjectIdentifier(m).hashValue)"
        case .signIn(let m): "signIn:\(ObjectIdentifier(m).hashValue)"
        case .authenticate(let m): "authenticate:\(ObjectIdentifier(m).hashValue)"
        case .documents(let m): "documents:\(ObjectIdentifier(m).hashValue)"
        case .viewer(let m): "viewer:\(ObjectIdentifier(m).hashValue)"
        case .history(let m): "history:\(ObjectIdentifier(m).hashValue)"
        }
    }
}
