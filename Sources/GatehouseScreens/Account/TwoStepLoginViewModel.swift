import Foundation
import GatehouseAPI
import GatehouseKit

/// "Two-step login" in an app's profile: turning the authenticator app on (the current password,
/// then the secret as a QR code's text and typed, then the app's first code), the recovery codes
/// shown once, and, once on, new recovery codes or turning it off (the password and a code).
///
/// The view draws ``State/phase``: a password field while ``Phase/off``, the QR code of
/// ``Enrolment/uri`` and a code field while ``Phase/enrolling(_:)``, the list of codes while
/// ``Phase/recoveryCodes(_:)``, and the status with its two actions while ``Phase/on(recoveryCodesLeft:)``.
@MainActor
public final class TwoStepLoginViewModel: ScreenModel<TwoStepLoginViewModel.State> {
    /// What the screen draws.
    public struct State: Equatable, Sendable {
        /// The screen's title.
        public var title: String
        /// Where the person is.
        public var phase: Phase = .loading
        /// What the current phase asks or says.
        public var message = ""
        /// The password field's label (shown while ``Phase/off`` and for the actions while ``Phase/on(recoveryCodesLeft:)``).
        public var passwordLabel: String
        /// The password as typed; drawn masked.
        public var password = ""
        /// The password field's content type.
        public let passwordContentType = TextContentType.password
        /// The code field's label (the app's code; a recovery code is taken too where it may stand in).
        public var codeLabel: String
        /// The code as typed.
        public var code = ""
        /// The code field's content type.
        public let codeContentType = TextContentType.oneTimeCode
        /// The main button's label: "Turn on", "Confirm", "Done", "New recovery codes".
        public var primaryTitle = ""
        /// The second button's label while on: "Turn off".
        public var disableTitle: String
        /// Whether the main button can be used.
        public var isPrimaryEnabled = false
        /// Whether "Turn off" can be used.
        public var isDisableEnabled = false
        /// True while a request is in flight.
        public var isLoading = false
        /// The server's (localized) reason for the last refusal; cleared by the next edit.
        public var errorMessage: String?
    }

    /// A new secret, shown while it waits for the app's first code.
    public struct Enrolment: Equatable, Sendable {
        /// `otpauth://totp/…`: draw it as a QR code (or open it on the phone that has the app).
        public var uri: String
        /// The secret to type into the app by hand, in groups of four.
        public var secret: String
    }

    /// The screen's phases.
    public enum Phase: Equatable, Sendable {
        /// Reading the status.
        case loading
        /// Off: the password turns it on.
        case off
        /// The secret to scan and a field for the app's first code.
        case enrolling(Enrolment)
        /// Ten recovery codes, shown this once: the person writes them down, then "Done".
        case recoveryCodes([String])
        /// On, with this many recovery codes left.
        case on(recoveryCodesLeft: Int)
    }

    private let client: AccountsClient
    private let localizer: Localizer
    private let messageForError: (any Error) -> String?
    private let passkeyAssertion: (@MainActor (PasskeyRequestOptions) async throws -> PasskeyAssertion)?
    /// Whether the account has passkeys: turning the app on then needs one of them too (a step-up).
    private var hasPasskeys = false

    /// The screen, on the app's client.
    /// - Parameter message: the app's text for a failed call.
    /// - Parameter passkeyAssertion: asks the platform for an assertion with the options given (on
    ///   iOS, `ASAuthorizationPlatformPublicKeyCredentialProvider.createCredentialAssertionRequest`):
    ///   when the account has passkeys, turning the app on needs one of them (the server's step-up).
    public init(client: AccountsClient, localizer: Localizer, message: @escaping (any Error) -> String?,
                passkeyAssertion: (@MainActor (PasskeyRequestOptions) async throws -> PasskeyAssertion)? = nil) {
        self.client = client
        self.localizer = localizer
        self.messageForError = message
        self.passkeyAssertion = passkeyAssertion
        let l = localizer
        super.init(state: State(title: l("twoStep.title"), passwordLabel: l("twoStep.password"), codeLabel: l("twoStep.code"),
                                disableTitle: l("twoStep.disable")))
    }

    /// Reads whether it is on: call when the screen appears.
    public func load() async {
        do {
            let status = try await client.secondFactors()
            hasPasskeys = status.passkeys > 0
            show(status.totp ? .on(recoveryCodesLeft: status.recoveryCodesLeft) : .off)
        } catch {
            update { $0.errorMessage = messageForError(error) }
        }
    }

    /// The password as typed.
    public func setPassword(_ text: String) {
        update { $0.password = text; $0.errorMessage = nil }
        refresh()
    }

    /// The code as typed.
    public func setCode(_ text: String) {
        update { $0.code = text; $0.errorMessage = nil }
        refresh()
    }

    /// The main button: "Turn on" (off), "Confirm" (enrolling), "Done" (codes shown), "New recovery codes" (on).
    public func primary() async {
        guard state.isPrimaryEnabled else { return }
        switch state.phase {
        case .loading: return
        case .off:
            await run {
                var assertion: PasskeyAssertion?
                if self.hasPasskeys, let ask = self.passkeyAssertion {
                    assertion = try await ask(try await self.client.passkeyStepUpOptions())
                }
                let enrolment = try await self.client.enrolTOTP(currentPassword: self.state.password, passkey: assertion)
                self.show(.enrolling(Enrolment(uri: enrolment.uri, secret: Self.grouped(enrolment.secret))))
            }
        case .enrolling:
            await run {
                let codes = try await self.client.confirmTOTP(code: self.state.code)
                self.show(.recoveryCodes(codes.codes))
            }
        case .recoveryCodes(let codes):
            show(.on(recoveryCodesLeft: codes.count))
        case .on:
            await run {
                let (code, recovery) = self.typedCode()
                let codes = try await self.client.renewRecoveryCodes(currentPassword: self.state.password, code: code, recoveryCode: recovery)
                self.show(.recoveryCodes(codes.codes))
            }
        }
    }

    /// "Turn off" (while on): the password and the app's code or a recovery code.
    public func disable() async {
        guard state.isDisableEnabled, case .on = state.phase else { return }
        await run {
            let (code, recovery) = self.typedCode()
            try await self.client.disableTOTP(currentPassword: self.state.password, code: code, recoveryCode: recovery)
            self.show(.off)
        }
    }

    /// Six digits are the app's code; anything else typed is taken as a recovery code.
    private func typedCode() -> (code: String?, recovery: String?) {
        let typed = state.code.filter { !$0.isWhitespace }
        return typed.count == 6 && typed.allSatisfy({ $0.isASCII && $0.isNumber }) ? (typed, nil) : (nil, typed)
    }

    private func run(_ body: @escaping @MainActor () async throws -> Void) async {
        update { $0.isLoading = true; $0.isPrimaryEnabled = false; $0.isDisableEnabled = false; $0.errorMessage = nil }
        do {
            try await body()
        } catch {
            update { $0.isLoading = false; $0.errorMessage = messageForError(error); $0.code = "" }
            refresh()
        }
    }

    private func show(_ phase: Phase) {
        let l = localizer
        update {
            $0.phase = phase
            $0.isLoading = false
            $0.password = ""
            $0.code = ""
            switch phase {
            case .loading: $0.message = ""; $0.primaryTitle = ""
            case .off: $0.message = l("twoStep.off"); $0.primaryTitle = l("twoStep.enable")
            case .enrolling: $0.message = l("twoStep.scan"); $0.primaryTitle = l("twoStep.confirm")
            case .recoveryCodes: $0.message = l("twoStep.codes"); $0.primaryTitle = l("twoStep.done")
            case .on(let left): $0.message = l("twoStep.on", String(left)); $0.primaryTitle = l("twoStep.renew")
            }
        }
        refresh()
    }

    private func refresh() {
        update {
            let passwordTyped = !$0.password.isEmpty
            let codeTyped = $0.code.filter { !$0.isWhitespace && $0 != "-" }.count >= 6
            switch $0.phase {
            case .loading: $0.isPrimaryEnabled = false; $0.isDisableEnabled = false
            case .off: $0.isPrimaryEnabled = passwordTyped; $0.isDisableEnabled = false
            case .enrolling: $0.isPrimaryEnabled = codeTyped; $0.isDisableEnabled = false
            case .recoveryCodes: $0.isPrimaryEnabled = true; $0.isDisableEnabled = false
            case .on: $0.isPrimaryEnabled = passwordTyped && codeTyped; $0.isDisableEnabled = passwordTyped && codeTyped
            }
            if $0.isLoading { $0.isPrimaryEnabled = false; $0.isDisableEnabled = false }
        }
    }

    /// `ABCD EFGH …`: easier to type from the screen.
    static func grouped(_ secret: String) -> String {
        stride(from: 0, to: secret.count, by: 4).map { start in
            let from = secret.index(secret.startIndex, offsetBy: start)
            return String(secret[from..<(secret.index(from, offsetBy: 4, limitedBy: secret.endIndex) ?? secret.endIndex)])
        }.joined(separator: " ")
    }
}
