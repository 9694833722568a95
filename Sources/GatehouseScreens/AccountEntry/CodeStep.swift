import Foundation
import GatehouseAPI
import GatehouseKit

/// The state of a screen with a code step (registration, password recovery): the code, and the
/// flags sending and resending it drive.
protocol CodeStepState: Equatable {
    /// The code step, once a code went out.
    var code: MessengerCodeState? { get set }
    /// True while a request is in flight.
    var isLoading: Bool { get set }
    /// The message for the last failed action.
    var errorMessage: String? { get set }
    /// A neutral notice ("A new code was sent to …").
    var infoMessage: String? { get set }
}

extension ForgotPasswordViewModel.State: CodeStepState {}
extension MessengerRegistrationViewModel.State: CodeStepState {}

/// The code step registration and password recovery share: mails a code to an address (the
/// code already sent there is reused while it lives: no second mail, and no 429), keeps the
/// code's countdowns in the screen's state, sets the code typed, sends it again.
///
/// The screen keeps its own steps: it passes `refresh` (recompute what its state derives,
/// calling ``apply(to:)``) and `show` (move to its code step).
@MainActor
final class CodeStep {
    private let environment: MessengerEnvironment
    private let request: @Sendable (String) async throws -> CodeSent
    private var countdown: CodeCountdown?
    /// The address the code was sent to, as typed (the later requests use it again).
    private(set) var email: String?

    /// - Parameter request: asks the server to mail a code to an address.
    init(environment: MessengerEnvironment, request: @escaping @Sendable (String) async throws -> CodeSent) {
        self.environment = environment
        self.request = request
    }

    /// Mails a code to `email` and shows the code step; shows it at once when the code sent
    /// to the same address still works.
    func send<State: CodeStepState>(to email: String, on screen: ScreenModel<State>, refresh: () -> Void, show: () -> Void) async {
        if email == self.email, let countdown, !countdown.isExpired {
            show()
            return
        }
        screen.update { $0.isLoading = true; $0.errorMessage = nil; $0.infoMessage = nil }
        refresh()
        do {
            let sent = try await request(email)
            let countdown = CodeCountdown(sent: sent, environment: environment)
            self.countdown?.stop()
            self.countdown = countdown
            self.email = email
            screen.update { $0.isLoading = false; $0.code = countdown.makeState() }
            show()
        } catch {
            screen.update { $0.isLoading = false; $0.errorMessage = environment.message(for: error) }
            refresh()
        }
    }

    /// "Send the code again": a new code to the same address, the field emptied and a notice;
    /// a 429 moves the resend countdown by its `Retry-After`.
    func resend<State: CodeStepState>(on screen: ScreenModel<State>, refresh: () -> Void) async {
        guard let email, screen.state.code?.isResendEnabled == true else { return }
        screen.update { $0.isLoading = true; $0.errorMessage = nil; $0.infoMessage = nil }
        refresh()
        do {
            let sent = try await request(email)
            countdown?.restart(with: sent)
            screen.update { $0.isLoading = false; $0.code?.code = ""; $0.infoMessage = environment.localizer("messenger.code.resent", sent.destination) }
        } catch GatehouseClientError.rateLimited(_, let message, let retryAfter) {
            countdown?.delayResend(by: retryAfter)
            screen.update { $0.isLoading = false; $0.errorMessage = message }
        } catch {
            screen.update { $0.isLoading = false; $0.errorMessage = environment.message(for: error) }
        }
        refresh()
    }

    /// Sets the code as typed or autofilled; digits only, at most the code's length.
    func setCode<State: CodeStepState>(_ text: String, on screen: ScreenModel<State>, refresh: () -> Void) {
        guard var code = screen.state.code else { return }
        code.code = InputRules.codeDigits(text, length: code.codeLength)
        screen.update { $0.code = code; $0.errorMessage = nil }
        refresh()
    }

    /// Recomputes both countdowns of `state`'s code from the clock (part of the screen's refresh).
    func apply<State: CodeStepState>(to state: inout State) {
        guard var code = state.code, let countdown else { return }
        countdown.apply(to: &code, isLoading: state.isLoading)
        state.code = code
    }

    /// Calls `tick` once a second while the code step is shown.
    func startCountdown(_ tick: @escaping @MainActor () -> Void) { countdown?.start(tick) }

    /// Stops the countdown.
    func stopCountdown() { countdown?.stop() }
}
