import Foundation
import GatehouseAPI
import GatehouseKit

/// What the phone-account screens need: the client, the strings, a clock.
public struct PhoneAccountsEnvironment: Sendable {
    /// The client of the server's `/api`.
    public var client: PhoneAccountsClient
    /// The strings, chosen by the device locale by default.
    public var localizer: Localizer
    /// The clock for the resend countdown.
    public var now: @Sendable () -> Date
    /// Seconds before a code may be sent again (the server's `GATEHOUSE_CODE_RESEND_SECONDS`).
    public var resendCooldown: Int
    /// Digits in a code (the server's `GATEHOUSE_CODE_LENGTH`).
    public var codeLength: Int
    /// The server's password rule (`GATEHOUSE_PASSWORD_MIN_LENGTH`, `…_REQUIRE_DIGIT`, `…_REQUIRE_SPECIAL`).
    public var passwordRule: PasswordRule

    /// Creates an environment.
    public init(client: PhoneAccountsClient, localizer: Localizer = .device, now: @escaping @Sendable () -> Date = { Date() },
                resendCooldown: Int = 60, codeLength: Int = 6, passwordRule: PasswordRule = PasswordRule()) {
        self.client = client
        self.localizer = localizer
        self.now = now
        self.resendCooldown = resendCooldown
        self.codeLength = codeLength
        self.passwordRule = passwordRule
    }

    /// The text to show for a failed call: the server's own message where it sent one; nothing
    /// for a call the app cancelled.
    public func message(for error: any Error) -> String? {
        localizer.message(for: error)
    }
}

/// The account categories of the spec, deciding the screen after login.
public enum AccountCategory: Equatable, Sendable {
    /// Email confirmed: the final screen.
    case confirmed
    /// Email present but not confirmed: a confirmation mail is sent and the user told so.
    case unconfirmed(email: String)
    /// No email: ask for one.
    case noEmail

    /// The category of an account as `GET /api/users/user` shows it.
    public init(_ user: PhoneUser) {
        if user.isConfirmed { self = .confirmed }
        else if let email = user.email, !email.isEmpty { self = .unconfirmed(email: email) }
        else { self = .noEmail }
    }
}

/// Where a logged-in user goes next; computed once and shared by login, registration and launch.
public enum AccountDestination: Equatable, Sendable {
    /// Signed in with a confirmed address: the final screen.
    case final(PhoneUser)
    /// Signed in, the address not confirmed yet (whether a mail just went).
    case confirmationPending(PhoneUser, mailSent: Bool)
    /// Signed in without an address: ask for one.
    case needsEmail(PhoneUser)
}

extension PhoneAccountsEnvironment {
    /// Reads the account and decides the next screen, sending the confirmation mail when the
    /// spec says so (after login and registration, not on a silent relaunch). Public so an app
    /// with screens of its own routes the same way.
    public func destinationAfterLogin(sendConfirmation: Bool) async throws -> AccountDestination {
        let user = try await client.currentUser()
        switch AccountCategory(user) {
        case .confirmed:
            return .final(user)
        case .noEmail:
            return .needsEmail(user)
        case .unconfirmed:
            guard sendConfirmation else { return .confirmationPending(user, mailSent: false) }
            do {
                try await client.sendConfirmationEmail()
                return .confirmationPending(user, mailSent: true)
            } catch GatehouseClientError.rateLimited {
                // One was sent moments ago: the user is still told to check the mail.
                return .confirmationPending(user, mailSent: true)
            }
        }
    }
}
