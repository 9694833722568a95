import Foundation
import GatehouseAPI
import GatehouseKit

/// What the messenger's screens need: the `/v1` client, the strings, a clock, the password
/// rule, how long to wait after typing before asking the server (a tag's availability, a people
/// search), and the device side of the messenger: where the offline stores live, how the
/// realtime socket connects, and the device's preferences (the theme).
public struct MessengerEnvironment: Sendable {
    /// The client of the server's `/v1`.
    public var client: AccountsClient
    /// The strings, chosen by the device locale by default.
    public var localizer: Localizer
    /// The clock for the code's expiry and resend countdowns, and the messages' times.
    public var now: @Sendable () -> Date
    /// The server's password rule (`GATEHOUSE_PASSWORD_MIN_LENGTH`, `…_REQUIRE_DIGIT`, `…_REQUIRE_SPECIAL`).
    public var passwordRule: PasswordRule
    /// Seconds of quiet after the last keystroke in the tag field before the server is asked;
    /// typing on within it cancels the pending check. The people search waits as long.
    public var tagCheckDelay: TimeInterval
    /// A label for the sessions this app opens (shown in the list of sessions), e.g. "iPhone 15".
    public var device: String?
    /// Where each account's offline copy of the messenger is kept.
    public var stores: MessengerStores
    /// The messenger's paging, socket and reconnection settings.
    public var repository: MessengerRepository.Configuration
    /// What this device remembers whoever is signed in (the theme).
    public var preferences: any DevicePreferences
    /// How long after sending a message its author may still edit it (the server's
    /// `GATEHOUSE_MESSENGER_EDIT_WINDOW`, 48 hours by default).
    public var editWindow: TimeInterval
    /// The time zone the messages' times and days are shown in.
    public var timeZone: TimeZone

    /// Creates an environment.
    public init(client: AccountsClient, localizer: Localizer = .device, now: @escaping @Sendable () -> Date = { Date() },
                passwordRule: PasswordRule = PasswordRule(), tagCheckDelay: TimeInterval = 0.4, device: String? = nil,
                stores: MessengerStores = .standard(name: "OneOnOne"), repository: MessengerRepository.Configuration = .init(),
                preferences: any DevicePreferences = UserDefaultsPreferences(), editWindow: TimeInterval = 48 * 3_600,
                timeZone: TimeZone = .current) {
        self.client = client
        self.localizer = localizer
        self.now = now
        self.passwordRule = passwordRule
        self.tagCheckDelay = tagCheckDelay
        self.device = device
        self.stores = stores
        self.repository = repository
        self.preferences = preferences
        self.editWindow = editWindow
        self.timeZone = timeZone
    }

    /// The text to show for a failed call: the server's own message where it sent one; nothing
    /// for a call the app cancelled.
    public func message(for error: any Error) -> String? {
        localizer.message(for: error)
    }

    /// The text for a refused code: the server's message, and how many wrong tries are left
    /// when the server said (``AccountsClient/lastProblem``).
    func codeMessage(for error: any Error) -> String? {
        guard let message = message(for: error) else { return nil }
        guard let problem = client.lastProblem, problem.code == .invalidCode, (error as? GatehouseClientError)?.code == .invalidCode,
              let left = problem.attemptsLeft else { return message }
        return message + " " + localizer("messenger.code.attemptsLeft", String(left))
    }

    /// The localized explanation of the first part of the password rule `password` breaks.
    func passwordProblem(_ password: String) -> String? {
        InputRules.passwordProblem(password, rule: passwordRule).map { localizer($0, String(passwordRule.minLength), String(passwordRule.maxBytes)) }
    }

    /// The localized explanation of the first part of the tag rule `canonical` breaks.
    func tagProblem(_ canonical: String) -> String? {
        switch TagRule.problem(with: canonical) {
        case nil: nil
        case .tooShort(let minimum): localizer("messenger.tag.tooShort", String(minimum))
        case .tooLong(let maximum): localizer("messenger.tag.tooLong", String(maximum))
        case .invalidCharacters: localizer("messenger.tag.characters")
        case .needsLetter: localizer("messenger.tag.needsLetter")
        }
    }
}

/// The code part of a screen that had a one-time code mailed: the field, and two countdowns
/// read from the server's ``CodeSent`` on the injected clock (how long the code lives, and when
/// another may be sent).
public struct MessengerCodeState: Equatable, Sendable {
    /// Where the code went (the address as the server normalised it).
    public var destination: String
    /// The instruction, naming the address.
    public var prompt: String
    /// The code field's label.
    public var codeLabel: String
    /// The code typed or autofilled, digits only.
    public var code = ""
    /// How many digits a code has (the server says, in ``CodeSent/codeLength``).
    public var codeLength: Int
    /// The field's content type: a one-time code, so iOS offers it above the keyboard.
    public let codeContentType = TextContentType.oneTimeCode
    /// Seconds the code still works; 0 once it has expired.
    public var expiresInSeconds: Int
    /// "The code is valid for 9:41" or "The code has expired. Send a new one."
    public var expiryText: String
    /// Seconds until "send again" works; 0 when it does.
    public var resendSecondsLeft: Int
    /// Whether "send again" can be used (the countdown is over and nothing is in flight).
    public var isResendEnabled = false
    /// "Send again in 0:42" or "Send the code again".
    public var resendTitle: String
    /// Whether the code typed has the full length.
    public var isComplete: Bool { code.count == codeLength }
}

/// Keeps a ``MessengerCodeState`` in step with the clock: the server's answer, the moment a
/// resend is allowed (moved by a 429's `Retry-After`), and a once-a-second ticker.
@MainActor
final class CodeCountdown {
    private(set) var sent: CodeSent
    private var resendAllowedAt: Date
    private let ticker = SecondTicker()
    private let environment: MessengerEnvironment

    init(sent: CodeSent, environment: MessengerEnvironment) {
        self.sent = sent
        self.resendAllowedAt = sent.resendAvailableAt
        self.environment = environment
    }

    /// A new code went out.
    func restart(with sent: CodeSent) {
        self.sent = sent
        resendAllowedAt = sent.resendAvailableAt
    }

    /// The server refused a resend for `seconds` more.
    func delayResend(by seconds: Int?) {
        resendAllowedAt = max(resendAllowedAt, environment.now().addingTimeInterval(TimeInterval(seconds ?? 60)))
    }

    var isExpired: Bool { sent.expiresAt <= environment.now() }

    /// A fresh code state for `sent` with an empty field.
    func makeState() -> MessengerCodeState {
        let l = environment.localizer
        var state = MessengerCodeState(destination: sent.destination, prompt: l("messenger.code.prompt", sent.destination), codeLabel: l("messenger.code.field"),
                                       codeLength: sent.codeLength, expiresInSeconds: 0, expiryText: "", resendSecondsLeft: 0, resendTitle: "")
        apply(to: &state, isLoading: false)
        return state
    }

    /// Recomputes both countdowns of `state` from the clock.
    func apply(to state: inout MessengerCodeState, isLoading: Bool) {
        let l = environment.localizer
        let now = environment.now()
        let expiresIn = Countdown.secondsLeft(until: sent.expiresAt, now: now)
        let resendIn = Countdown.secondsLeft(until: resendAllowedAt, now: now)
        state.destination = sent.destination
        state.prompt = l("messenger.code.prompt", sent.destination)
        state.codeLength = sent.codeLength
        state.expiresInSeconds = expiresIn
        state.expiryText = expiresIn == 0 ? l("messenger.code.expired") : l("messenger.code.expiresIn", Countdown.clock(expiresIn))
        state.resendSecondsLeft = resendIn
        state.isResendEnabled = resendIn == 0 && !isLoading
        state.resendTitle = resendIn == 0 ? l("messenger.code.resend") : l("messenger.code.resendIn", Countdown.clock(resendIn))
    }

    /// Calls `tick` once a second until ``stop()`` (while the code step is shown).
    func start(_ tick: @escaping @MainActor () -> Void) {
        ticker.start { tick(); return true }
    }

    func stop() { ticker.stop() }
}

extension GatehouseErrorCode {
    /// The refusals that are about the code typed: the user stays on (or returns to) the code step.
    var isAboutTheCode: Bool { self == .invalidCode || self == .codeExpired || self == .codeAttemptsExhausted }
}
