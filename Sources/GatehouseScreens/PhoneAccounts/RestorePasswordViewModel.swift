import Foundation
import GatehouseAPI
import GatehouseKit

/// Restore password: a phone (the new password comes by SMS) or an email.
@MainActor
public final class RestorePasswordViewModel: ScreenModel<RestorePasswordViewModel.State> {
    /// How the new password travels.
    public enum Method: String, Equatable, Sendable, CaseIterable { case sms, email }

    /// What the screen shows.
    public struct State: Equatable, Sendable {
        public var title: String
        public var method: Method = .sms
        public var methodTitles: [Method: String]
        public var fieldLabel: String
        public var value = ""
        public var fieldContentType = TextContentType.telephoneNumber
        public var submitTitle: String
        public var backTitle: String
        public var isSubmitEnabled = false
        public var isLoading = false
        public var errorMessage: String?
        /// Set once the password went out; the screen then offers only "Back to login".
        public var successMessage: String?
    }

    public enum Outcome: Equatable, Sendable {
        /// Back to login, with the identifier pre-filled.
        case backToLogin(login: String)
    }

    public var onOutcome: ((Outcome) -> Void)?
    private let environment: PhoneAccountsEnvironment

    public init(environment: PhoneAccountsEnvironment) {
        self.environment = environment
        let l = environment.localizer
        super.init(state: State(title: l("restore.title"), methodTitles: [.sms: l("restore.bySMS"), .email: l("restore.byEmail")],
                                fieldLabel: l("restore.phone"), submitTitle: l("restore.submit"), backTitle: l("restore.back")))
    }

    public func setMethod(_ method: Method) {
        let l = environment.localizer
        update {
            $0.method = method
            $0.fieldLabel = method == .sms ? l("restore.phone") : l("restore.email")
            $0.fieldContentType = method == .sms ? .telephoneNumber : .emailAddress
            $0.errorMessage = nil
        }
        setValue(state.value)
    }

    public func setValue(_ text: String) {
        update {
            $0.value = text
            $0.errorMessage = nil
            let valid = $0.method == .sms ? InputRules.isPhone(text) : InputRules.isEmail(text)
            $0.isSubmitEnabled = valid && !$0.isLoading && $0.successMessage == nil
        }
    }

    /// "Send a new password".
    public func submit() async {
        guard state.isSubmitEnabled else { return }
        let value = state.value.trimmingCharacters(in: .whitespaces)
        update { $0.isLoading = true; $0.isSubmitEnabled = false; $0.errorMessage = nil }
        do {
            switch state.method {
            case .sms: try await environment.client.restorePassword(.phone(value), viaSMS: true)
            case .email: try await environment.client.restorePassword(.email(value), viaSMS: false)
            }
            let key = state.method == .sms ? "restore.sentSMS" : "restore.sentEmail"
            update { $0.isLoading = false; $0.successMessage = environment.localizer(key, value) }
        } catch {
            update { $0.isLoading = false; $0.errorMessage = environment.message(for: error) }
            setValue(state.value)
        }
    }

    /// "Back to login".
    public func backToLogin() { onOutcome?(.backToLogin(login: state.value.trimmingCharacters(in: .whitespaces))) }
}
