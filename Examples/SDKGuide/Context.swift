// What the samples of docs/sdk.md take from the app around them: scripts/check-sdk-guide.py compiles
// every sample beside this file, as an app that adds the SDK would. Only names the guide leaves to the
// app are here (its values, its screens, its alerts); nothing of the SDK is stubbed.
import Foundation
import GatehouseKit
import GatehouseScreens
import GatehouseSignature

// MARK: The app's values

let server = URL(string: "http://127.0.0.1:8080")!
let url = server
let phone = "+7 912 345-67-89"
let email = "ann@example.com"
let code = "123456"
let newPassword = "N3w-pass!"
let jpegData = Data()
let pdfData = Data()
let selfie: Data? = nil
let client = PhoneAccountsClient(baseURL: server)
let accounts = AccountsClient(baseURL: server)
let profile = SignToLoginProfile(email: email, userName: "Ann Lee")
let tenPointLists: [SignaturePointList] = []
let me = Account(id: UUID(), email: email, emailConfirmed: true, pendingEmail: nil, phone: nil, phoneVerified: false, tag: "ann", firstName: "Ann",
                 lastName: "Lee", middleName: nil, birthday: nil, locale: "en", avatarUrl: nil, createdAt: Date(), updatedAt: Date())
let chat = Chat(id: UUID(), person: Person(id: UUID(), firstName: "Bob", lastName: nil, tag: "bob", avatarUrl: nil, relation: .friend,
                                                      requestId: nil, chatId: nil),
                           lastMessage: nil, unreadCount: 0, lastReadMessageId: nil, otherLastReadMessageId: nil, mutedUntil: nil)
@MainActor var flowObservation: ObservationToken?

// MARK: The app's views and alerts

@MainActor final class ProgressView { var progress: Float = 0 }
@MainActor let progressView = ProgressView()
struct Size { var width = 390.0, height = 120.0 }
struct View { var bounds = Size() }
let view = View()
struct Touch { var timestamp = 0.0 }
let touch = Touch()
let p = (x: 10.0, y: 20.0)
struct MyDeviceFacts: DeviceFactsProvider {
    func facts() async -> DeviceFacts {
        DeviceFacts(osVersion: "18.1", deviceModel: "iPhone 15", screenWidth: 1179, screenHeight: 2556)
    }
}

@MainActor func offerLogin(message: String) {}
@MainActor func showBanner(_ message: String, retryIn seconds: Int? = nil) {}
@MainActor func showAccount(_ user: PhoneUser) {}
@MainActor func showMessenger(_ account: Account) {}
@MainActor func showCodeError(_ message: String, attemptsLeft: Int?) {}
@MainActor func showLogin() {}
@MainActor func askForCode() async -> String { code }
@MainActor func showQRCode(_ text: String) {}
@MainActor func showRecoveryCodes(_ codes: [String]) {}
@MainActor func showSpinner() {}
@MainActor func show(_ screen: AnyObject) {}
@MainActor func presentEmailPrompt(_ prompt: EmailPromptViewModel) {}
@MainActor func dismissEmailPrompt() {}
@MainActor func applyTheme(_ theme: Theme) {}

/// The app's view controllers: each binds its view model, as docs/sdk.md shows in UIKit.
@MainActor class Screen<Model: AnyObject> { let viewModel: Model; init(viewModel: Model) { self.viewModel = viewModel } }
typealias StartViewController = Screen<StartViewModel>
typealias RegistrationViewController = Screen<RegistrationViewModel>
typealias CodeEntryViewController = Screen<CodeEntryViewModel>
typealias LoginViewController = Screen<LoginViewModel>
typealias RestorePasswordViewController = Screen<RestorePasswordViewModel>
typealias ConfirmationPendingViewController = Screen<ConfirmationPendingViewModel>
typealias FinalViewController = Screen<FinalViewModel>
typealias DeleteAccountViewController = Screen<DeleteAccountViewModel>
typealias SplashViewController = Screen<SplashViewModel>
typealias ChooseTagViewController = Screen<ChooseTagViewModel>
typealias MessengerLoginViewController = Screen<MessengerLoginViewModel>
typealias ForgotPasswordViewController = Screen<ForgotPasswordViewModel>
typealias MessengerRegistrationViewController = Screen<MessengerRegistrationViewModel>
typealias MessengerTabBarController = Screen<MessengerMainViewModel>

// MARK: What an earlier step of the guide made

let ink = SignatureCapture(color: .blue).ink(width: 390, height: 120)
