import Foundation
import GatehouseAPI
import GatehouseKit

/// The spec's profile screen, where the user lands after logging in: the login (tag) and email
/// given at sign-up, the added info, the phone and the wallet, with "Add info", "Add phone",
/// "Attach wallet" and "Payments". The spec's own list of missing guards is kept here: nothing
/// can be pressed until the profile has loaded, the wallet can be attached only to a verified
/// phone, and payments open only once there is a wallet.
@MainActor
public final class WalletHomeViewModel: ScreenModel<WalletHomeViewModel.State> {
    /// What the screen draws: every title, value and switch of its view.
    public struct State: Equatable, Sendable {
        /// The screen's title.
        public var title: String
        /// The labels of the rows and buttons, by name (`login`, `email`, `name`, `birthday`,
        /// `phone`, `balance`, `addInfo`, `addPhone`, `attachWallet`, `payments`, `logout`, `deleteAccount`).
        public var labels: [String: String]
        /// My login (the tag, with `@`).
        public var login = ""
        /// My email address.
        public var email = ""
        /// The name shown.
        public var name = ""
        /// My birthday (`dd.MM.yyyy`), if given.
        public var birthday = ""
        /// My photo, if any.
        public var avatarURL: URL?
        /// The verified phone, or a line saying there is none.
        public var phone = ""
        /// Whether the phone is verified.
        public var isPhoneVerified = false
        /// The wallet's balance ("1 000,00 ₽"), once there is a wallet.
        public var balance: String?
        /// Whether the profile has loaded (the spec's guard: until then nothing can be pressed).
        public var isLoaded = false
        /// Whether "add info" works now.
        public var isAddInfoEnabled = false
        /// Whether "add phone" works now.
        public var isAddPhoneEnabled = false
        /// Whether "attach" works now.
        public var isAttachEnabled = false
        /// Whether "payments" works now.
        public var isPaymentsEnabled = false
        /// Whether "top up" works now.
        public var isTopUpEnabled = false
        /// A call is in flight: show progress and keep the buttons off.
        public var isLoading = false
        /// Why the last action failed, in the person's language; nil when nothing failed.
        public var errorMessage: String?
        /// A neutral notice (what the last step did).
        public var infoMessage: String?
    }

    /// Where the screen leads; the flow acts on it.
    public enum Outcome: Equatable, Sendable {
        /// "Add info".
        case addInfo(Account)
        /// "Add phone".
        case addPhone(Account)
        /// "Attach wallet".
        case attachWallet(Account)
        /// "Payments": the dialogs.
        case payments(Account)
        /// "Top up": money in through the payment provider.
        case topUp
        /// Logged out: back to the start.
        case loggedOut
        /// "Delete account": its own screen (the password and a confirmation).
        case deleteAccount
    }

    /// Called with the screen's outcome (the flow sets it).
    public var onOutcome: ((Outcome) -> Void)?
    private let environment: WalletEnvironment
    private(set) var account: Account?
    private(set) var wallet: WalletInfo?

    /// - Parameter info: a notice from the step the user came back from ("The wallet is attached").
    public init(environment: WalletEnvironment, info: String? = nil) {
        self.environment = environment
        let l = environment.localizer
        let labels = Dictionary(uniqueKeysWithValues: ["login", "email", "name", "birthday", "phone", "balance", "addInfo", "addPhone", "attachWallet", "payments", "topUp", "logout"]
            .map { ($0, l("wallet.home.\($0)")) } + [("deleteAccount", l("account.delete.item"))])
        super.init(state: State(title: l("wallet.home.title"), labels: labels, infoMessage: info))
    }

    /// Loads the profile and the wallet (call when the screen appears and after each step).
    public func load() async {
        update { $0.isLoading = true; $0.errorMessage = nil }
        do {
            let account = try await environment.client.me()
            var wallet: WalletInfo?
            do {
                wallet = try await environment.wallet.wallet()
            } catch let error as GatehouseClientError where error.code == .walletNotFound {
                wallet = nil
            }
            self.account = account
            self.wallet = wallet
            let l = environment.localizer
            update {
                $0.isLoading = false
                $0.isLoaded = true
                $0.login = account.tag.map { "@" + $0 } ?? ""
                $0.email = account.email ?? ""
                $0.name = [account.firstName, account.lastName].compactMap { $0 }.joined(separator: " ")
                $0.birthday = account.birthday.flatMap(BirthdayText.display) ?? ""
                $0.avatarURL = account.avatarUrl.flatMap(URL.init(string:))
                $0.isPhoneVerified = account.phoneVerified && account.phone != nil
                $0.phone = $0.isPhoneVerified ? account.phone ?? "" : l("wallet.home.noPhone")
                $0.balance = wallet.map { WalletFormat.money($0.balance, l) }
                $0.isAddInfoEnabled = true
                $0.isAddPhoneEnabled = !$0.isPhoneVerified
                $0.isAttachEnabled = $0.isPhoneVerified && wallet == nil
                $0.isPaymentsEnabled = wallet != nil
                // Only where the server takes top-ups (a server before 1.2 does not say: offered, as it was).
                $0.isTopUpEnabled = wallet.map { $0.topUps ?? true } ?? false
            }
        } catch {
            update { $0.isLoading = false; $0.errorMessage = environment.message(for: error) }
        }
    }

    /// "Add info".
    public func addInfo() { if state.isAddInfoEnabled, let account { onOutcome?(.addInfo(account)) } }
    /// "Add phone".
    public func addPhone() { if state.isAddPhoneEnabled, let account { onOutcome?(.addPhone(account)) } }
    /// "Attach wallet" (once the phone is verified).
    public func attachWallet() { if state.isAttachEnabled, let account { onOutcome?(.attachWallet(account)) } }
    /// "Payments" (once a wallet is attached).
    public func payments() { if state.isPaymentsEnabled, let account { onOutcome?(.payments(account)) } }
    /// "Top up" (once a wallet is attached).
    public func topUp() { if state.isTopUpEnabled { onOutcome?(.topUp) } }

    /// "Delete account" (usable once the profile has loaded).
    public func deleteAccount() { if state.isLoaded { onOutcome?(.deleteAccount) } }

    /// "Log out": ends the session on the server and on the device.
    public func logout() async {
        try? await environment.client.logout()
        onOutcome?(.loggedOut)
    }
}

/// Birthdays as people type them (`dd.mm.yyyy` or `yyyy-mm-dd`) and as the API keeps them (`yyyy-MM-dd`).
enum BirthdayText {
    /// The API's form of a typed birthday: a real date, not in the future, after 1900; nil otherwise.
    static func parse(_ text: String, now: Date) -> String? {
        let t = text.trimmingCharacters(in: .whitespaces)
        let parts: [Int]
        if t.contains(".") {
            parts = t.split(separator: ".").compactMap { Int($0) }.reversed()
        } else {
            parts = t.split(separator: "-").compactMap { Int($0) }
        }
        guard parts.count == 3, (1900...9999).contains(parts[0]), (1...12).contains(parts[1]), (1...31).contains(parts[2]) else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        guard let date = calendar.date(from: DateComponents(year: parts[0], month: parts[1], day: parts[2])),
              calendar.component(.day, from: date) == parts[2], date <= now else { return nil }
        return String(format: "%04d-%02d-%02d", parts[0], parts[1], parts[2])
    }

    /// `yyyy-MM-dd` shown as `dd.MM.yyyy`.
    static func display(_ api: String) -> String? {
        let parts = api.split(separator: "-")
        guard parts.count == 3 else { return nil }
        return "\(parts[2]).\(parts[1]).\(parts[0])"
    }
}

/// "Add info": a photo from the gallery, the birthday and the name (the spec's AddInfo screen).
/// "Save" sends what changed: the names and birthday in one profile update, then the photo.
@MainActor
public final class AddInfoViewModel: ScreenModel<AddInfoViewModel.State> {
    /// What the screen draws: every title, value and switch of its view.
    public struct State: Equatable, Sendable {
        /// The screen's title.
        public var title: String
        /// Labels by name: `firstName`, `lastName`, `birthday`, `photo`, `save`, `back`.
        public var labels: [String: String]
        /// The first name as typed.
        public var firstName: String
        /// The last name as typed.
        public var lastName: String
        /// As typed: `dd.mm.yyyy` (or `yyyy-mm-dd`); a date picker sets it with ``AddInfoViewModel/setBirthday(_:)-(Date)``.
        public var birthday: String
        /// Why the birthday is not accepted yet; nil when it is.
        public var birthdayError: String?
        /// The photo picked, not yet sent (its size in bytes, for the view to say so).
        public var photoBytes: Int?
        /// My photo now, if any.
        public var avatarURL: URL?
        /// Whether "save" works now.
        public var isSaveEnabled = false
        /// A call is in flight: show progress and keep the buttons off.
        public var isLoading = false
        /// Why the last action failed, in the person's language; nil when nothing failed.
        public var errorMessage: String?
    }

    /// Where the screen leads; the flow acts on it.
    public enum Outcome: Equatable, Sendable {
        /// Saved: the account as it now is.
        case saved(Account)
        /// Back to the profile.
        case back
    }
    /// Called with the screen's outcome (the flow sets it).
    public var onOutcome: ((Outcome) -> Void)?
    private let environment: WalletEnvironment
    private let account: Account
    private var photo: (Data, String)?

    /// The screen with `account`'s info filled in.
    public init(environment: WalletEnvironment, account: Account) {
        self.environment = environment
        self.account = account
        let l = environment.localizer
        let labels = Dictionary(uniqueKeysWithValues: ["firstName", "lastName", "birthday", "photo", "save", "back"].map { ($0, l("wallet.info.\($0)")) })
        super.init(state: State(title: l("wallet.info.title"), labels: labels, firstName: account.firstName ?? "", lastName: account.lastName ?? "",
                                birthday: account.birthday.flatMap(BirthdayText.display) ?? "", avatarURL: account.avatarUrl.flatMap(URL.init(string:))))
    }

    /// The first name as typed.
    public func setFirstName(_ text: String) { update { $0.firstName = text; $0.errorMessage = nil }; revalidate() }
    /// The last name as typed.
    public func setLastName(_ text: String) { update { $0.lastName = text; $0.errorMessage = nil }; revalidate() }
    /// The birthday as typed (`dd.mm.yyyy` or `yyyy-mm-dd`).
    public func setBirthday(_ text: String) { update { $0.birthday = text; $0.errorMessage = nil }; revalidate() }

    /// The date a picker chose.
    public func setBirthday(_ date: Date) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day], from: date)
        setBirthday(String(format: "%02d.%02d.%04d", c.day ?? 1, c.month ?? 1, c.year ?? 2000))
    }

    /// The photo picked from the gallery (sent on "Save").
    public func setPhoto(_ data: Data, contentType: String) {
        photo = (data, contentType)
        update { $0.photoBytes = data.count; $0.errorMessage = nil }
        revalidate()
    }

    private var changes: ProfileUpdate? {
        func trimmed(_ s: String) -> String { s.trimmingCharacters(in: .whitespaces) }
        var update = ProfileUpdate()
        if trimmed(state.firstName) != (account.firstName ?? "") { update.firstName = .some(trimmed(state.firstName)) }
        if trimmed(state.lastName) != (account.lastName ?? "") { update.lastName = .some(trimmed(state.lastName)) }
        let birthday = trimmed(state.birthday)
        if let api = BirthdayText.parse(birthday, now: environment.accounts.now()), api != account.birthday { update.birthday = .some(api) }
        return update == ProfileUpdate() ? nil : update
    }

    private func revalidate() {
        let typed = state.birthday.trimmingCharacters(in: .whitespaces)
        let birthdayError = typed.isEmpty || BirthdayText.parse(typed, now: environment.accounts.now()) != nil ? nil : environment.localizer("wallet.info.badBirthday")
        update {
            $0.birthdayError = birthdayError
            $0.isSaveEnabled = !$0.isLoading && birthdayError == nil && (changes != nil || photo != nil)
        }
    }

    /// "Save".
    public func save() async {
        guard state.isSaveEnabled else { return }
        update { $0.isLoading = true; $0.isSaveEnabled = false; $0.errorMessage = nil }
        do {
            var saved = account
            if let changes { saved = try await environment.client.updateProfile(changes) }
            if let (data, type) = photo {
                saved = try await environment.client.uploadAvatar(data: data, contentType: type)
                photo = nil
            }
            update { $0.isLoading = false }
            onOutcome?(.saved(saved))
        } catch {
            update { $0.isLoading = false; $0.errorMessage = environment.message(for: error) }
            revalidate()
        }
    }

    /// "Back": leaves the screen.
    public func back() { onOutcome?(.back) }
}

/// "Add phone": the number and the account's password, "Send code", then the SMS code and
/// "Confirm". The spec's missing guards: "Send code" waits for a valid number and the password,
/// and the code field and "Confirm" stay disabled until a code was sent.
@MainActor
public final class AddPhoneViewModel: ScreenModel<AddPhoneViewModel.State> {
    /// What the screen draws: every title, value and switch of its view.
    public struct State: Equatable, Sendable, CodeStepState {
        /// The screen's title.
        public var title: String
        /// Labels by name: `phone`, `password`, `sendCode`, `confirm`, `back`.
        public var labels: [String: String]
        /// The phone as typed.
        public var phone = ""
        /// Why the phone is not accepted yet; nil when it is.
        public var phoneError: String?
        /// The account's password: a phone is a new way into the account.
        public var password = ""
        /// The content type the phone field gives the keyboard (autofill of a phone number).
        public let phoneContentType = TextContentType.telephoneNumber
        /// Whether "send" works now.
        public var isSendEnabled = false
        /// The code step, once a code was sent (nil before: the field is not shown).
        public var code: MessengerCodeState?
        /// Whether "confirm" works now.
        public var isConfirmEnabled = false
        /// A call is in flight: show progress and keep the buttons off.
        public var isLoading = false
        /// Why the last action failed, in the person's language; nil when nothing failed.
        public var errorMessage: String?
        /// A neutral notice (what the last step did).
        public var infoMessage: String?
    }

    /// Where the screen leads; the flow acts on it.
    public enum Outcome: Equatable, Sendable {
        /// The phone is verified: the account as it now is.
        case verified(Account)
        /// Back to the profile.
        case back
    }
    /// Called with the screen's outcome (the flow sets it).
    public var onOutcome: ((Outcome) -> Void)?
    private let environment: WalletEnvironment
    private var codeStep: CodeStep!
    private let password = PasswordBox()

    /// The screen on `environment`'s clients and words.
    public init(environment: WalletEnvironment) {
        self.environment = environment
        let l = environment.localizer
        let labels = Dictionary(uniqueKeysWithValues: ["phone", "password", "sendCode", "confirm", "back"].map { ($0, l("wallet.phone.\($0)")) })
        super.init(state: State(title: l("wallet.phone.title"), labels: labels))
        let client = environment.client
        let password = password
        codeStep = CodeStep(environment: environment.accounts) { phone in
            try await client.requestPhoneVerification(phone, currentPassword: password.value)
        }
    }

    /// The phone as typed.
    public func setPhone(_ text: String) { update { $0.phone = text; $0.errorMessage = nil }; revalidate() }
    /// The current password as typed (a phone change needs it).
    public func setPassword(_ text: String) { password.value = text; update { $0.password = text; $0.errorMessage = nil }; revalidate() }
    /// The SMS code as typed.
    public func setCode(_ text: String) { codeStep.setCode(text, on: self, refresh: revalidate) }

    private var phone: String { state.phone.trimmingCharacters(in: .whitespaces) }

    private func revalidate() {
        let phoneError = phone.isEmpty || InputRules.isPhone(phone) ? nil : environment.localizer("wallet.phone.badPhone")
        update {
            $0.phoneError = phoneError
            $0.isSendEnabled = !$0.isLoading && !phone.isEmpty && phoneError == nil && !$0.password.isEmpty
            $0.isConfirmEnabled = !$0.isLoading && $0.code?.isComplete == true
            codeStep?.apply(to: &$0)
            // The code step's words are the mail's; this code comes by SMS.
            if let destination = $0.code?.destination {
                $0.code?.prompt = environment.localizer("wallet.phone.prompt", destination)
                $0.code?.codeLabel = environment.localizer("wallet.phone.code")
            }
        }
    }

    /// "Send code" (again, once its countdown allows, through the code step's resend).
    public func sendCode() async {
        guard state.isSendEnabled else { return }
        if state.code != nil, codeStep.email == phone {
            await codeStep.resend(on: self, refresh: revalidate)
        } else {
            await codeStep.send(to: phone, on: self, refresh: revalidate, show: revalidate)
        }
    }

    /// "Confirm": the code attaches the phone to the account.
    public func confirm() async {
        guard state.isConfirmEnabled, let code = state.code else { return }
        update { $0.isLoading = true; $0.errorMessage = nil }
        revalidate()
        do {
            let account = try await environment.client.verifyPhone(codeStep.email ?? phone, code: code.code)
            update { $0.isLoading = false }
            onOutcome?(.verified(account))
        } catch {
            update { $0.isLoading = false; $0.errorMessage = environment.accounts.codeMessage(for: error) }
            revalidate()
        }
    }

    /// "Back": leaves the screen.
    public func back() { onOutcome?(.back) }
}

/// The password as typed, read by the code request when it runs.
private final class PasswordBox: @unchecked Sendable {
    private let lock = NSLock()
    private var stored = ""
    var value: String {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}

/// "Attach wallet": the wallet goes to the verified phone shown; attaching is possible only
/// with one (the spec's "Привязать кошелек").
@MainActor
public final class AttachWalletViewModel: ScreenModel<AttachWalletViewModel.State> {
    /// What the screen draws: every title, value and switch of its view.
    public struct State: Equatable, Sendable {
        /// The screen's title.
        public var title: String
        /// "The wallet will be attached to +7 916 123-45-67."
        public var explanation: String
        /// The "attach" button's title.
        public var attachTitle: String
        /// The "back" button's title.
        public var backTitle: String
        /// Whether "attach" works now.
        public var isAttachEnabled: Bool
        /// A call is in flight: show progress and keep the buttons off.
        public var isLoading = false
        /// Why the last action failed, in the person's language; nil when nothing failed.
        public var errorMessage: String?
    }

    /// Where the screen leads; the flow acts on it.
    public enum Outcome: Equatable, Sendable {
        /// The wallet is attached.
        case attached(WalletInfo)
        /// Back to the profile.
        case back
    }
    /// Called with the screen's outcome (the flow sets it).
    public var onOutcome: ((Outcome) -> Void)?
    private let environment: WalletEnvironment

    /// The screen for `account` (attaching needs its verified phone).
    public init(environment: WalletEnvironment, account: Account) {
        self.environment = environment
        let l = environment.localizer
        let verified = account.phoneVerified && account.phone != nil
        super.init(state: State(title: l("wallet.attach.title"),
                                explanation: verified ? l("wallet.attach.explanation", account.phone ?? "") : l("wallet.attach.needPhone"),
                                attachTitle: l("wallet.attach.attach"), backTitle: l("wallet.attach.back"), isAttachEnabled: verified))
    }

    /// "Attach": attaches the wallet to the verified phone.
    public func attach() async {
        guard state.isAttachEnabled, !state.isLoading else { return }
        update { $0.isLoading = true; $0.isAttachEnabled = false; $0.errorMessage = nil }
        do {
            let wallet = try await environment.wallet.attach()
            update { $0.isLoading = false }
            onOutcome?(.attached(wallet))
        } catch {
            update { $0.isLoading = false; $0.isAttachEnabled = true; $0.errorMessage = environment.message(for: error) }
        }
    }

    /// "Back": leaves the screen.
    public func back() { onOutcome?(.back) }
}
