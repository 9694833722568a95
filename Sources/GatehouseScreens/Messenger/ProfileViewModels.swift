import Foundation
import GatehouseAPI
import GatehouseKit

/// The Profile tab: my avatar, names, tag and email, and the settings list: edit my data,
/// privacy, theme, log out (after a confirmation; the device's copy of the messenger is wiped),
/// delete the account (its own screen: the password and a confirmation).
@MainActor
public final class ProfileViewModel: MessengerScreenModel<ProfileViewModel.State> {
    /// The settings list's entries.
    public enum Item: String, CaseIterable, Equatable, Sendable {
        /// Edit the profile.
        case editProfile
        /// Who may message me.
        case privacy
        /// The theme.
        case theme
        /// Log out (asks first).
        case logout
        /// Delete the account.
        case deleteAccount
    }

    /// One entry of the settings list.
    public struct SettingRow: Equatable, Sendable {
        /// Which entry.
        public var item: Item
        /// The screen's title.
        public var title: String
        /// The current choice ("Friends only", "Dark"), where the row has one.
        public var value: String?
        /// Whether destructive.
        public var isDestructive: Bool
    }

    /// What the screen draws: every title, value and switch of its view.
    public struct State: Equatable, Sendable {
        /// The screen's title.
        public var title: String
        /// The name shown.
        public var name: String
        /// My tag, with `@`.
        public var tag: String
        /// My email address.
        public var email: String
        /// My avatar, if any.
        public var avatarURL: URL?
        /// What stands in for an avatar (the initials).
        public var initials: String
        /// The settings, in order.
        public var settings: [SettingRow] = []
        /// The "Log out?" question, while shown.
        public var confirmation: Confirmation?
        /// A call is in flight: show progress and keep the buttons off.
        public var isLoading = false
        /// A notice over the screen (offline, say); nil when there is none.
        public var notice: String?
    }

    private var token: ObservationToken?

    init(environment: MessengerEnvironment, repository: MessengerRepository) {
        super.init(environment: environment, repository: repository, state: State(title: environment.localizer("messenger.profile.title"), name: "", tag: "", email: "", initials: ""))
        token = repository.observe { [weak self] changes in
            if changes.contains(.account) || changes.contains(.privacy) || changes.contains(.connectivity) { self?.rebuild() }
        }
        rebuild()
    }

    /// Redraws (the theme screen changed the theme).
    func rebuild() {
        let l = environment.localizer
        let account = repository.account
        let name = [account.firstName, account.lastName].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: " ")
        let theme = Theme.stored(in: environment.preferences)
        update {
            $0.name = name
            $0.tag = account.tag.map { "@" + $0 } ?? ""
            $0.email = account.email ?? ""
            $0.avatarURL = account.avatarUrl.flatMap(URL.init(string:))
            $0.initials = String(([account.firstName?.first, account.lastName?.first].compactMap { $0 }.map(String.init).joined()).prefix(2)).uppercased()
            $0.settings = Item.allCases.map { item in
                let value: String? = switch item {
                case .privacy: repository.privacy.map { l("messenger.privacy.\($0.whoCanMessageMe.rawValue)") }
                case .theme: l("messenger.theme.\(theme.rawValue)")
                default: nil
                }
                let title = item == .deleteAccount ? l("account.delete.item") : l("messenger.profile.\(item.rawValue)")
                return SettingRow(item: item, title: title, value: value, isDestructive: item == .logout || item == .deleteAccount)
            }
            $0.notice = connectivityNotice(repository.connectivity, l)
        }
    }

    /// Pull to refresh: the account, and the rest of the messenger, read again.
    public func refresh() async { await repository.refresh() }

    /// A settings row tapped; "Log out" asks first.
    public func open(_ item: Item) {
        switch item {
        case .editProfile: navigate(.editProfile)
        case .privacy: navigate(.privacy)
        case .theme: navigate(.theme)
        case .deleteAccount: navigate(.deleteAccount)
        case .logout:
            let l = environment.localizer
            update {
                $0.confirmation = Confirmation(title: l("messenger.home.logoutQuestion"), message: l("messenger.home.logoutMessage"),
                                               confirmTitle: l("messenger.home.logoutConfirm"), cancelTitle: l("messenger.home.logoutCancel"))
            }
        }
    }

    /// Stays signed in: the logout question goes.
    public func cancelLogout() { update { $0.confirmation = nil } }

    /// "Log out" on the question: the session ends on the server (best effort offline), the
    /// token and the device's copy are forgotten; the app goes back to login.
    public func confirmLogout() async {
        guard state.confirmation != nil, !state.isLoading else { return }
        update { $0.isLoading = true; $0.confirmation = nil }
        await repository.logout()
        update { $0.isLoading = false }
    }
}

/// "Edit my data": avatar, first and last name, the tag (checked as typed), and the email
/// (changed after a code mailed to the new address, with the current password).
@MainActor
public final class EditProfileViewModel: MessengerScreenModel<EditProfileViewModel.State> {
    /// Where changing the email stands: not started, the new address and password, or the code sent to it.
    public enum EmailStep: Equatable, Sendable {
        /// The address shown; "Change" starts the change.
        case idle
        /// The new address and the current password.
        case form
        /// The code sent to the new address.
        case code
    }

    /// What the screen draws: every title, value and switch of its view.
    public struct State: Equatable, Sendable {
        /// The screen's title.
        public var title: String
        /// My avatar, if any.
        public var avatarURL: URL?
        /// What stands in for an avatar (the initials).
        public var initials: String
        /// The first name as typed.
        public var firstName: String
        /// The last name as typed.
        public var lastName: String
        /// The tag as typed.
        public var tag: String
        /// Whether the tag typed is free (checked as typed, after a pause).
        public var tagStatus: TagStatus = .available
        /// What the tag check says (taken, not a tag); nil when it is fine.
        public var tagMessage: String?
        /// The words of the fields and buttons, by key.
        public var labels: [String: String]
        /// The "save" button's title.
        public var saveTitle: String
        /// Something changed, the tag can be had, nothing in flight.
        public var isSaveEnabled = false
        /// My email address now.
        public var email: String
        /// An address waiting for its code.
        public var pendingEmail: String?
        /// Where changing the email stands.
        public var emailStep: EmailStep = .idle
        /// The new address as typed.
        public var newEmail = ""
        /// The current password as typed (changing the email needs it).
        public var currentPassword = ""
        /// The code sent to the new address, its field and countdowns, while one is sent.
        public var code: MessengerCodeState?
        /// A call is in flight: show progress and keep the buttons off.
        public var isLoading = false
        /// Why the last action failed, in the person's language; nil when nothing failed.
        public var errorMessage: String?
        /// A neutral notice (what the last step did).
        public var infoMessage: String?
    }

    private let tagCheck: TagCheck
    private var codeStep: CodeStep?

    init(environment: MessengerEnvironment, repository: MessengerRepository) {
        self.tagCheck = TagCheck(environment: environment)
        let l = environment.localizer
        let account = repository.account
        var labels: [String: String] = [:]
        for key in ["firstName", "lastName", "tag", "email", "newEmail", "currentPassword", "changeEmail", "sendCode", "confirm", "avatar", "removeAvatar"] {
            labels[key] = l("messenger.edit.\(key)")
        }
        // Spelled out: as one expression, the initials and the labels took the type checker about two seconds.
        let first: Substring = account.firstName?.prefix(1) ?? ""
        let last: Substring = account.lastName?.prefix(1) ?? ""
        let initials = String(first + last).uppercased()
        super.init(environment: environment, repository: repository, state: State(title: l("messenger.edit.title"), avatarURL: account.avatarUrl.flatMap(URL.init(string:)),
                                initials: initials,
                                firstName: account.firstName ?? "", lastName: account.lastName ?? "", tag: account.tag ?? "",
                                labels: labels, saveTitle: l("messenger.edit.save"), email: account.email ?? "", pendingEmail: account.pendingEmail))
    }

    private var account: Account { repository.account }
    private var canonicalTag: String { TagRule.canonical(state.tag) }

    /// The first name as typed.
    public func setFirstName(_ text: String) { update { $0.firstName = text; $0.errorMessage = nil; $0.infoMessage = nil }; revalidate() }
    /// The last name as typed.
    public func setLastName(_ text: String) { update { $0.lastName = text; $0.errorMessage = nil; $0.infoMessage = nil }; revalidate() }

    /// The tag as typed: checked against the rule at once and with the server after a pause (my own is fine).
    public func setTag(_ text: String) {
        update { $0.tag = text; $0.errorMessage = nil; $0.infoMessage = nil }
        tagCheck.schedule(canonicalTag, mine: account.tag, current: { [weak self] in self?.canonicalTag }) { [weak self] status, message in
            self?.update { $0.tagStatus = status; $0.tagMessage = message }
            self?.revalidate()
        }
        revalidate()
    }

    /// Waits for the tag check in flight.
    public func settleTagCheck() async { await tagCheck.settle() }

    private var changes: ProfileUpdate? {
        func trimmed(_ s: String) -> String { s.trimmingCharacters(in: .whitespaces) }
        var update = ProfileUpdate()
        if trimmed(state.firstName) != (account.firstName ?? "") { update.firstName = .some(trimmed(state.firstName)) }
        if trimmed(state.lastName) != (account.lastName ?? "") { update.lastName = .some(trimmed(state.lastName)) }
        if canonicalTag != (account.tag ?? "") { update.tag = .some(canonicalTag) }
        return update == ProfileUpdate() ? nil : update
    }

    private func revalidate() {
        update {
            $0.isSaveEnabled = changes != nil && $0.tagStatus == .available && !$0.isLoading
                && !$0.firstName.trimmingCharacters(in: .whitespaces).isEmpty
            codeStep?.apply(to: &$0)
        }
    }

    /// "Save": names and tag.
    public func save() async {
        guard state.isSaveEnabled, let changes else { return }
        await perform { try await self.environment.client.updateProfile(changes) }
        if state.errorMessage == nil { update { $0.infoMessage = environment.localizer("messenger.edit.saved") } }
    }

    /// A new avatar (the picked image's bytes; the server knows JPEG, PNG, WebP by their bytes).
    public func setAvatar(_ data: Data, contentType: String) async {
        await perform { try await self.environment.client.uploadAvatar(data: data, contentType: contentType) }
    }

    /// Removes my avatar.
    public func removeAvatar() async {
        await perform { try await self.environment.client.removeAvatar() }
    }

    private func perform(_ call: @escaping () async throws -> Account) async {
        guard !state.isLoading else { return }
        update { $0.isLoading = true; $0.errorMessage = nil; $0.infoMessage = nil }
        revalidate()
        do {
            let account = try await call()
            repository.accountChanged(account)
            update {
                $0.isLoading = false
                $0.avatarURL = account.avatarUrl.flatMap(URL.init(string:))
                $0.firstName = account.firstName ?? ""
                $0.lastName = account.lastName ?? ""
                $0.tag = account.tag ?? ""
                $0.email = account.email ?? ""
                $0.pendingEmail = account.pendingEmail
            }
        } catch {
            update { $0.isLoading = false; $0.errorMessage = environment.message(for: error) }
            if let error = error as? GatehouseClientError, error.code == .tagTaken {
                update { $0.tagStatus = .taken; $0.tagMessage = error.message }
            }
        }
        revalidate()
    }

    // MARK: Email

    /// "Change email": the new address and the current password.
    public func startEmailChange() { update { $0.emailStep = .form; $0.errorMessage = nil } }
    /// The new address as typed.
    public func setNewEmail(_ text: String) { update { $0.newEmail = text; $0.errorMessage = nil } }
    /// The current password as typed.
    public func setCurrentPassword(_ text: String) { update { $0.currentPassword = text; $0.errorMessage = nil } }

    /// "Send code": mails a code to the new address.
    public func requestEmailCode() async {
        let email = state.newEmail.trimmingCharacters(in: .whitespaces)
        guard InputRules.isEmail(email) else {
            update { $0.errorMessage = environment.localizer("field.emailInvalid") }
            return
        }
        let password = state.currentPassword
        let client = environment.client
        let step = CodeStep(environment: environment) { try await client.requestEmailChange($0, currentPassword: password) }
        codeStep?.stopCountdown()
        codeStep = step
        await step.send(to: email, on: self, refresh: revalidate) {
            update { $0.emailStep = .code; $0.currentPassword = "" }
            step.startCountdown { [weak self] in self?.revalidate() }
        }
    }

    /// The code as typed (digits only, at most its length); a whole code confirms at once.
    public func setCode(_ text: String) {
        codeStep?.setCode(text, on: self, refresh: revalidate)
    }

    /// Sends the code again, once its cooldown is over.
    public func resendCode() async {
        await codeStep?.resend(on: self, refresh: revalidate)
    }

    /// "Confirm": the code; the new address becomes the account's.
    public func confirmEmail() async {
        guard let code = state.code, code.isComplete else { return }
        await perform { try await self.environment.client.verifyEmailChange(code: code.code) }
        if state.errorMessage == nil {
            codeStep?.stopCountdown()
            codeStep = nil
            update { $0.emailStep = .idle; $0.code = nil; $0.newEmail = ""; $0.infoMessage = environment.localizer("messenger.edit.emailChanged") }
        }
    }

    /// Leaves the email change.
    public func cancelEmailChange() {
        codeStep?.stopCountdown()
        codeStep = nil
        update { $0.emailStep = .idle; $0.code = nil; $0.newEmail = ""; $0.currentPassword = ""; $0.errorMessage = nil }
    }

    /// "Back": leaves the screen.
    public func back() {
        tagCheck.cancel()
        codeStep?.stopCountdown()
        navigate(.back)
    }
}

extension EditProfileViewModel.State: CodeStepState {}

/// Privacy: who can message me (everyone, or friends only).
@MainActor
public final class PrivacyViewModel: MessengerScreenModel<PrivacyViewModel.State> {
    /// One choice of who may message me.
    public struct Option: Equatable, Sendable {
        /// Whom it lets in.
        public var audience: MessagingAudience
        /// The screen's title.
        public var title: String
        /// Whether selected.
        public var isSelected: Bool
    }

    /// What the screen draws: every title, value and switch of its view.
    public struct State: Equatable, Sendable {
        /// The screen's title.
        public var title: String
        /// What the setting means, under it.
        public var caption: String
        /// The choices, the current one marked.
        public var options: [Option] = []
        /// A call is in flight: show progress and keep the buttons off.
        public var isLoading = false
        /// Why the last action failed, in the person's language; nil when nothing failed.
        public var errorMessage: String?
    }


    init(environment: MessengerEnvironment, repository: MessengerRepository) {
        let l = environment.localizer
        super.init(environment: environment, repository: repository, state: State(title: l("messenger.privacy.title"), caption: l("messenger.privacy.caption")))
        rebuild()
    }

    private func rebuild() {
        let l = environment.localizer
        let current = repository.privacy?.whoCanMessageMe ?? .everyone
        update { $0.options = MessagingAudience.allCases.map { Option(audience: $0, title: l("messenger.privacy.\($0.rawValue)"), isSelected: $0 == current) } }
    }

    /// Chooses who may message me (saved on the server).
    public func choose(_ audience: MessagingAudience) async {
        guard !state.isLoading else { return }
        update { $0.isLoading = true; $0.errorMessage = nil }
        do {
            try await repository.setPrivacy(audience)
            update { $0.isLoading = false }
        } catch {
            update { $0.isLoading = false; $0.errorMessage = environment.message(for: error) }
        }
        rebuild()
    }

    /// "Back": leaves the screen.
    public func back() { navigate(.back) }
}

/// Theme: light, dark or as the system; kept on the device and applied at once through
/// ``MessengerAppFlow/State/theme``.
@MainActor
public final class ThemeViewModel: MessengerScreenModel<ThemeViewModel.State> {
    /// One choice of theme.
    public struct Option: Equatable, Sendable {
        /// The theme it picks.
        public var theme: Theme
        /// The screen's title.
        public var title: String
        /// Whether selected.
        public var isSelected: Bool
    }

    /// What the screen draws: every title, value and switch of its view.
    public struct State: Equatable, Sendable {
        /// The screen's title.
        public var title: String
        /// The choices, the current one marked.
        public var options: [Option] = []
    }

    var onChange: ((Theme) -> Void)?

    init(environment: MessengerEnvironment, repository: MessengerRepository) {
        super.init(environment: environment, repository: repository, state: State(title: environment.localizer("messenger.theme.title")))
        rebuild()
    }

    private func rebuild() {
        let l = environment.localizer
        let current = Theme.stored(in: environment.preferences)
        update { $0.options = Theme.allCases.map { Option(theme: $0, title: l("messenger.theme.\($0.rawValue)"), isSelected: $0 == current) } }
    }

    /// Chooses a theme (kept on the device).
    public func choose(_ theme: Theme) {
        environment.preferences.set(theme.rawValue, for: Theme.preferenceKey)
        rebuild()
        onChange?(theme)
    }

    /// "Back": leaves the screen.
    public func back() { navigate(.back) }
}
