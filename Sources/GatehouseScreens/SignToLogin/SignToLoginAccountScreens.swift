import Foundation
import GatehouseAPI
import GatehouseKit
import GatehouseSignature

/// The kind of keyboard a field wants (the UI maps it to `UIKeyboardType`).
public enum KeyboardKind: String, Equatable, Sendable {
    /// Plain text.
    case text
    /// An email keyboard.
    case email
    /// A phone pad.
    case phone
    /// A date (a picker, or digits and dots).
    case date
    /// A name (words capitalised).
    case name
}

/// The registration form (the Sign To Login spec, "Регистрация"): email and user name
/// required; picture, phone, company, position, birthday and sex optional; each field checked by
/// its own rule as the person types, "Next" only when every filled field is valid.
@MainActor
public final class ProfileFormViewModel: ScreenModel<ProfileFormViewModel.State> {
    /// The form's fields: email and user name required, the rest optional.
    public enum Field: String, CaseIterable, Equatable, Sendable {
        /// The email field.
        case email
        /// The user name field.
        case userName
        /// The phone field.
        case phone
        /// The company field.
        case company
        /// The position field.
        case position
        /// The birthday field.
        case birthday
        /// The sex field.
        case sex
    }

    /// One field as drawn.
    public struct FieldState: Equatable, Sendable {
        /// Which field.
        public var field: Field
        /// Its label.
        public var label: String
        /// Its value as typed (refused characters left out).
        public var value: String
        /// Whether the field must be filled.
        public var isRequired: Bool
        /// The keyboard it wants.
        public var keyboard: KeyboardKind
        /// Why the value is not accepted, once something is typed.
        public var error: String?
    }

    /// What the screen draws: every title, value and switch of its view.
    public struct State: Equatable, Sendable {
        /// The screen's title.
        public var title: String
        /// The fields, in the form's order.
        public var fields: [FieldState]
        /// The picture chosen, if any.
        public var photo: Data?
        /// The picture picker's title.
        public var photoTitle: String
        /// The sex field's choices: the value sent (`male`, `female`) and its words.
        public var sexChoices: [String: String]
        /// The "next" button's title.
        public var nextTitle: String
        /// Whether "next" works now.
        public var isNextEnabled = false
    }

    /// Where the screen leads; the flow acts on it.
    public enum Outcome: Equatable, Sendable {
        /// "Next": enrol with this profile.
        case enrol(SignToLoginProfile)
        /// Back to the previous screen.
        case back
    }

    /// Called with the screen's outcome (the flow sets it).
    public var onOutcome: ((Outcome) -> Void)?
    private let localizer: Localizer

    /// Each field's keyboard, longest value and rule; email and phone by the rules every screen
    /// of the package uses (``InputRules``).
    static let rules: [Field: (keyboard: KeyboardKind, maxLength: Int, isValid: @Sendable (String) -> Bool)] = [
        .email: (.email, 254, InputRules.isEmail),
        .userName: (.name, SignatureProfileRules.maxLength(.userName), { SignatureProfileRules.isValid($0, for: .userName) }),
        .phone: (.phone, SignatureProfileRules.maxLength(.phoneNumber), { InputRules.isPhone($0) && SignatureProfileRules.isValid($0, for: .phoneNumber) }),
        .company: (.text, SignatureProfileRules.maxLength(.companyName), { SignatureProfileRules.isValid($0, for: .companyName) }),
        .position: (.text, SignatureProfileRules.maxLength(.position), { SignatureProfileRules.isValid($0, for: .position) }),
        .birthday: (.date, SignatureProfileRules.maxLength(.birthday), { SignatureProfileRules.isValid($0, for: .birthday) }),
        .sex: (.text, SignatureProfileRules.maxLength(.sex), { SignatureProfileRules.isValid($0, for: .sex) }),
    ]

    /// The spec's field a form field is (the email has its own rule).
    static func specField(_ field: Field) -> SignatureProfileRules.Field? {
        switch field {
        case .email: nil
        case .userName: .userName
        case .phone: .phoneNumber
        case .company: .companyName
        case .position: .position
        case .birthday: .birthday
        case .sex: .sex
        }
    }

    /// The form, filled with what the device remembers of the person (when it does).
    public init(localizer: Localizer, remembered: SignToLoginProfile? = nil) {
        self.localizer = localizer
        let values: [Field: String?] = [.email: remembered?.email, .userName: remembered?.userName, .phone: remembered?.phone,
                                        .company: remembered?.company, .position: remembered?.position, .birthday: remembered?.birthday,
                                        .sex: remembered?.sex]
        let fields = Field.allCases.map { field in
            FieldState(field: field, label: localizer("stl.profile.\(field.rawValue)"), value: (values[field] ?? nil) ?? "",
                       isRequired: field == .email || field == .userName, keyboard: Self.rules[field]!.keyboard)
        }
        super.init(state: State(title: localizer("stl.profile.title"), fields: fields, photo: remembered?.photo, photoTitle: localizer("stl.profile.photo"),
                                sexChoices: ["male": localizer("stl.profile.male"), "female": localizer("stl.profile.female")],
                                nextTitle: localizer("stl.profile.next")))
        revalidate()
    }

    /// Sets a field as typed. A character the field does not take (a digit in a name, a letter in
    /// a phone, `<` anywhere) is not put in: the field keeps the rest and says which were left out.
    public func set(_ field: Field, _ value: String) {
        let limit = Self.rules[field]!.maxLength
        let kept = Self.specField(field).map { SignatureProfileRules.filtered(value, for: $0) } ?? String(value.prefix(limit))
        let refused = Self.specField(field).map { spec in String(value.filter { !SignatureProfileRules.allows($0, in: spec) }) } ?? ""
        update { state in
            if let index = state.fields.firstIndex(where: { $0.field == field }) { state.fields[index].value = kept }
        }
        revalidate()
        if !refused.isEmpty {
            let note = localizer("stl.profile.notAllowed", String(Set(refused)).sorted().map(String.init).joined(separator: " "))
            update { state in
                if let index = state.fields.firstIndex(where: { $0.field == field }) { state.fields[index].error = note }
            }
        }
    }

    /// Sets (or removes) the picture.
    public func setPhoto(_ data: Data?) { update { $0.photo = data } }

    /// A field's value, trimmed.
    public func value(_ field: Field) -> String {
        state.fields.first { $0.field == field }?.value.trimmingCharacters(in: .whitespaces) ?? ""
    }

    /// Whether a value passes its field's rule (an empty optional field passes).
    static func isValid(_ field: Field, _ value: String, required: Bool) -> Bool {
        guard !value.isEmpty else { return !required }
        return rules[field]!.isValid(value)
    }

    private func revalidate() {
        let localizer = self.localizer
        update { state in
            for index in state.fields.indices {
                let field = state.fields[index]
                let value = field.value.trimmingCharacters(in: .whitespaces)
                state.fields[index].error = value.isEmpty || Self.isValid(field.field, value, required: field.isRequired)
                    ? nil : localizer("stl.profile.invalid.\(field.field.rawValue)")
            }
            state.isNextEnabled = state.fields.allSatisfy { field in
                Self.isValid(field.field, field.value.trimmingCharacters(in: .whitespaces), required: field.isRequired)
            }
        }
    }

    /// "Next": to the enrolment with the profile (only when every filled field is valid).
    public func next() {
        guard state.isNextEnabled else { return }
        func optional(_ field: Field) -> String? { value(field).isEmpty ? nil : value(field) }
        onOutcome?(.enrol(SignToLoginProfile(email: EmailAddress.normalize(value(.email)) ?? value(.email).lowercased(), userName: value(.userName), phone: optional(.phone),
                                             company: optional(.company), position: optional(.position), birthday: optional(.birthday),
                                             sex: optional(.sex), photo: state.photo)))
    }

    /// "Back": leaves the screen.
    public func back() { onOutcome?(.back) }
}

/// Enrolment (the Sign To Login spec, figure 3): ten signatures, each on a clean pad, a
/// counter, the pen's colour; "Cancel" goes back to the form. The ten go in one request; when the
/// server refuses some (`res 2`) the screen asks for exactly the missing ones and sends them the
/// same way; an address that already has an account gets a code by email first.
@MainActor
public final class EnrolmentViewModel: ScreenModel<EnrolmentViewModel.State> {
    /// What the screen draws: every title, value and switch of its view.
    public struct State: Equatable, Sendable {
        /// The screen's title.
        public var title: String
        /// "Signature 3 of 10".
        public var counter: String
        /// How many signatures are drawn so far.
        public var collected: Int
        /// How many the server needs now (10 at first; after a refusal, the missing ones).
        public var required: Int
        /// The "accept" button's title.
        public var acceptTitle: String
        /// Whether "accept" works now.
        public var isAcceptEnabled = false
        /// The "cancel" button's title.
        public var cancelTitle: String
        /// Waiting for the email code (`res 13`); the field's value and label.
        public var isAskingForCode = false
        /// The code field's label.
        public var codeLabel: String
        /// The emailed code as typed.
        public var code = ""
        /// A call is in flight: show progress and keep the buttons off.
        public var isLoading = false
        /// Why the last action failed, in the person's language; nil when nothing failed.
        public var errorMessage: String?
        /// A neutral notice, e.g. "2 signatures could not be used: please sign 2 more times".
        public var infoMessage: String?
    }

    /// Where the screen leads; the flow acts on it.
    public enum Outcome: Equatable, Sendable {
        /// Enrolled: the profile as the device remembers it (without the photo).
        case enrolled(SignToLoginProfile)
        /// The person cancelled.
        case cancelled
    }

    /// Called with the screen's outcome (the flow sets it).
    public var onOutcome: ((Outcome) -> Void)?
    /// The pad the signatures are drawn on.
    public let pad: SignaturePadModel
    /// Whose signature is enrolled.
    public var email: String { profile.email }
    private let environment: SignToLoginEnvironment
    private let profile: SignToLoginProfile
    private var signatures: [SignaturePointList] = []
    /// The code from the email once entered: every later batch of this enrolment carries it.
    private var proofCode: String?
    private var padToken: ObservationToken?

    /// The enrolment of `profile`: `count` signatures (the server's number, 10).
    public init(environment: SignToLoginEnvironment, profile: SignToLoginProfile, count: Int = 10) {
        self.environment = environment
        self.profile = profile
        let l = environment.localizer
        pad = SignaturePadModel(localizer: l)
        super.init(state: State(title: l("stl.enrol.title"), counter: l("stl.enrol.counter", "1", String(count)), collected: 0, required: count,
                                acceptTitle: l("stl.enrol.accept"), cancelTitle: l("stl.enrol.cancel"), codeLabel: l("stl.enrol.code")))
        padToken = pad.observe { [weak self] pad in self?.update { $0.isAcceptEnabled = pad.isLongEnough && !$0.isLoading && !$0.isAskingForCode } }
    }

    /// "Accept": keeps the pad's signature and clears it; the last one sends them all.
    public func accept() async {
        guard state.isAcceptEnabled else { return }
        signatures.append(pad.points)
        pad.clear()
        let l = environment.localizer
        update {
            $0.collected = signatures.count
            $0.counter = l("stl.enrol.counter", String(min(signatures.count + 1, $0.required)), String($0.required))
            $0.errorMessage = nil
        }
        if signatures.count >= state.required { await send(code: proofCode) }
    }

    /// The emailed code as typed (digits only, six at most).
    public func setCode(_ code: String) { update { $0.code = InputRules.codeDigits(code, length: 6) } }

    /// Sends the signatures again with the code from the email.
    public func submitCode() async {
        guard state.isAskingForCode, state.code.count == 6 else { return }
        proofCode = state.code
        await send(code: state.code)
    }

    /// "Cancel": leaves without doing anything.
    public func cancel() { onOutcome?(.cancelled) }

    private func send(code: String?) async {
        update { $0.isLoading = true; $0.isAcceptEnabled = false }
        let l = environment.localizer
        do {
            switch try await environment.client.register(profile, signatures: signatures, emailCode: code) {
            case .registered:
                var remembered = profile
                remembered.photo = nil
                environment.remember(remembered)
                update { $0.isLoading = false; $0.isAskingForCode = false; $0.infoMessage = l("stl.enrol.done") }
                onOutcome?(.enrolled(remembered))
            case .moreSignaturesNeeded(let required, _, _, _):
                // The server kept the others: only the missing ones go next time.
                signatures = []
                update {
                    $0.isLoading = false
                    $0.isAskingForCode = false
                    $0.required = required
                    $0.collected = 0
                    $0.counter = l("stl.enrol.counter", "1", String(required))
                    $0.infoMessage = l("stl.enrol.more", String(required))
                }
            case .emailCodeRequired:
                update { $0.isLoading = false; $0.isAskingForCode = true; $0.infoMessage = l("stl.enrol.codeSent", profile.email) }
            }
        } catch {
            if case SignToLoginError.invalidEmailCode = error { proofCode = nil }
            update { $0.isLoading = false; $0.errorMessage = environment.message(for: error) }
        }
        let long = pad.state.isLongEnough
        update { $0.isAcceptEnabled = long && !$0.isLoading && !$0.isAskingForCode }
    }
}

/// "Log in" by email (figure 5): unknown → an error and back to the start; known without a model
/// from this type of device → enrolment; enrolled → the signature.
@MainActor
public final class SignInViewModel: ScreenModel<SignInViewModel.State> {
    /// What the screen draws: every title, value and switch of its view.
    public struct State: Equatable, Sendable {
        /// The screen's title.
        public var title: String
        /// The email field's label.
        public var emailLabel: String
        /// The address as typed.
        public var email: String
        /// The keyboard the field wants.
        public let keyboard = KeyboardKind.email
        /// The "submit" button's title.
        public var submitTitle: String
        /// Whether "submit" works now.
        public var isSubmitEnabled = false
        /// A call is in flight: show progress and keep the buttons off.
        public var isLoading = false
        /// Why the last action failed, in the person's language; nil when nothing failed.
        public var errorMessage: String?
    }

    /// Where the screen leads; the flow acts on it.
    public enum Outcome: Equatable, Sendable {
        /// Enrolled from this device: to the signature.
        case authenticate(email: String)
        /// Enrolled elsewhere or not through this app: make a new sample (the spec's `res 3`).
        case enrol(email: String)
        /// Back to the start screen, with the error to show there.
        case unknownUser(message: String)
    }

    /// Called with the screen's outcome (the flow sets it).
    public var onOutcome: ((Outcome) -> Void)?
    private let environment: SignToLoginEnvironment

    /// The screen on `environment`'s client and words.
    public init(environment: SignToLoginEnvironment) {
        self.environment = environment
        let l = environment.localizer
        let email = environment.rememberedProfile?.email ?? ""
        super.init(state: State(title: l("stl.login.title"), emailLabel: l("stl.profile.email"), email: email, submitTitle: l("stl.login.submit"),
                                isSubmitEnabled: InputRules.isEmail(email)))
    }

    /// The address as typed.
    public func setEmail(_ text: String) {
        let email = text.trimmingCharacters(in: .whitespaces)
        update { $0.email = email; $0.errorMessage = nil; $0.isSubmitEnabled = InputRules.isEmail(email) }
    }

    /// "Continue": asks the server about the address on this type of device; the outcome leads to the signature, the enrolment or back to the start.
    public func submit() async {
        guard state.isSubmitEnabled, !state.isLoading else { return }
        let email = state.email.lowercased()
        update { $0.isLoading = true }
        do {
            let presence = try await environment.client.login(email: email)
            update { $0.isLoading = false }
            switch presence {
            case .enrolled: onOutcome?(.authenticate(email: email))
            case .enrolmentRequired: onOutcome?(.enrol(email: email))
            case .unknownUser: onOutcome?(.unknownUser(message: environment.localizer("stl.login.unknown", email)))
            }
        } catch {
            update { $0.isLoading = false; $0.errorMessage = environment.message(for: error) }
        }
    }
}

/// The signature that signs in (figure 6) or signs a document: the pad, "Sign", and the server's
/// similarity shown as a percentage. Signing in needs the app's threshold (a lower score clears
/// the pad for another try); signing a document always goes on (the spec: "authorisation always
/// succeeds"), and the score is what later readers of the document are warned by.
@MainActor
public final class AuthenticateViewModel: ScreenModel<AuthenticateViewModel.State> {
    /// What the screen draws: every title, value and switch of its view.
    public struct State: Equatable, Sendable {
        /// The screen's title.
        public var title: String
        /// The "submit" button's title.
        public var submitTitle: String
        /// Whether "submit" works now.
        public var isSubmitEnabled = false
        /// A call is in flight: show progress and keep the buttons off.
        public var isLoading = false
        /// "Match: 82%" once scored.
        public var similarityText: String?
        /// How alike the last signature was (0–1), once scored.
        public var similarity: Double?
        /// Whether the signature was accepted.
        public var isAccepted = false
        /// Why the last action failed, in the person's language; nil when nothing failed.
        public var errorMessage: String?
    }

    /// A signature the server scored: how alike, and the attempt's id for `/savedocument/`.
    public struct Result: Equatable, Sendable {
        /// How alike (0–1).
        public var similarity: Double
        /// The attempt's id.
        public var signatureID: String
        /// The signature as drawn (what a document's stamp shows).
        public var ink: SignatureInk
    }

    /// Where the screen leads; the flow acts on it.
    public enum Outcome: Equatable, Sendable {
        /// The signature was scored (and accepted when a match is required).
        case authenticated(Result)
        /// No sample for this device and app: enrol.
        case enrolmentRequired
        /// Nobody enrolled has that address.
        case unknownUser
    }

    /// Called with the screen's outcome (the flow sets it).
    public var onOutcome: ((Outcome) -> Void)?
    /// The pad the signature is drawn on.
    public let pad: SignaturePadModel
    /// Whose signature it is.
    public let email: String
    private let environment: SignToLoginEnvironment
    private var padToken: ObservationToken?
    /// Sent with the signature when the app took one (the spec: a photo taken when signing).
    public var photo: Data?

    /// Whether the threshold decides (signing in) or any score goes on (signing a document).
    public let requiresMatch: Bool

    /// The signature screen for `email`; `requiresMatch` false lets a low score go on (signing a document keeps it for later readers).
    public init(environment: SignToLoginEnvironment, email: String, requiresMatch: Bool = true) {
        self.environment = environment
        self.email = email
        self.requiresMatch = requiresMatch
        let l = environment.localizer
        pad = SignaturePadModel(localizer: l)
        super.init(state: State(title: l("stl.auth.title"), submitTitle: l("stl.auth.submit")))
        padToken = pad.observe { [weak self] pad in self?.update { $0.isSubmitEnabled = pad.isLongEnough && !$0.isLoading } }
    }

    /// "Sign": sends the drawn signature (with the photo, when the app took one) to be scored.
    public func submit() async {
        guard state.isSubmitEnabled else { return }
        update { $0.isLoading = true; $0.isSubmitEnabled = false; $0.errorMessage = nil }
        let l = environment.localizer
        do {
            switch try await environment.client.authenticate(email: email, signature: pad.points, photo: photo) {
            case .scored(let similarity, let id):
                let accepted = similarity >= environment.acceptSimilarity
                update {
                    $0.isLoading = false
                    $0.similarity = similarity
                    $0.isAccepted = accepted
                    // Signing a document goes on with a low score (kept, and its readers warned): "try again" would be untrue.
                    let key = accepted ? "stl.auth.match" : self.requiresMatch ? "stl.auth.lowMatch" : "stl.auth.lowMatchSigning"
                    $0.similarityText = l(key, String(Int((similarity * 100).rounded())))
                }
                if accepted || !requiresMatch {
                    onOutcome?(.authenticated(Result(similarity: similarity, signatureID: id, ink: pad.state.ink)))
                } else {
                    pad.clear()
                }
            case .enrolmentRequired: update { $0.isLoading = false }; onOutcome?(.enrolmentRequired)
            case .unknownUser: update { $0.isLoading = false }; onOutcome?(.unknownUser)
            }
        } catch {
            update { $0.isLoading = false; $0.errorMessage = environment.message(for: error) }
        }
    }
}
