import Foundation
import GatehouseAPI

/// The client of the JSON account API `/v1` (`docs/api-v1.md`): accounts and sessions, each call
/// the ``Endpoint`` that `GatehouseAPI` declares, sent through a ``GatehouseClient`` core. Errors
/// are ``GatehouseClientError`` values carrying the server's code and (localized) `detail`.
///
/// The client keeps the session in its ``SessionStore``: ``login(identifier:password:device:)``
/// and ``signup(_:)`` save it, ``logout()`` and any 401 on an authenticated call clear it,
/// ``restoreSession()`` brings it back on launch only if it has not expired.
public final class AccountsClient: SessionKeepingClient {
    /// The core this client sends through (share it with the apps' clients for one session).
    public let core: GatehouseClient

    /// Creates a client on a shared core (``SessionKeepingClient`` makes one with a core of its own).
    public init(core: GatehouseClient) {
        self.core = core
    }

    /// The problem document of the most recent refusal this client's core received, for the
    /// members ``GatehouseClientError`` does not carry (`attemptsLeft`, `field`). With several
    /// calls in flight it belongs to whichever failed last; read it right after catching the error.
    public var lastProblem: Problem? { core.lastProblem }

    // MARK: Sign-up

    /// `POST /v1/signup/code`: sends a sign-up code to an email address. An address that already
    /// has an account gets a notice instead, with the same answer (the form never tells).
    public func requestSignupCode(email: String) async throws -> CodeSent {
        try await core.call(V1.Accounts.signupCode, CodeRequest(email: email))
    }

    /// `POST /v1/signup/code`: sends a sign-up code by SMS to a phone in any common format.
    public func requestSignupCode(phone: String) async throws -> CodeSent {
        try await core.call(V1.Accounts.signupCode, CodeRequest(phone: phone))
    }

    /// `POST /v1/signup`: creates the account with the code and stores the new session.
    @discardableResult
    public func signup(_ request: SignupRequest) async throws -> AuthSession {
        var request = request
        if request.tokens == nil { request.tokens = core.requestedTokens }
        let answer = try await core.call(V1.Accounts.signup, request)
        try core.store(answer)
        return answer
    }

    /// `GET /v1/tags/{tag}`: whether a tag is free. The tag is sent as ``TagRule/canonical(_:)``
    /// makes it (trimmed, without `@`, lower-case); one that breaks the rule is refused with
    /// `invalid_tag`.
    public func tagAvailability(_ tag: String) async throws -> TagAvailability {
        var canonical = TagRule.canonical(tag)
        // A segment of dots would be read as `.`/`..` by URL normalisation: escape them too.
        if !canonical.isEmpty, canonical.allSatisfy({ $0 == "." }) {
            canonical = canonical.replacingOccurrences(of: ".", with: "%2E")
            return try await core.call(V1.Accounts.tag, escapedPath: V1.Accounts.tag.path.replacingOccurrences(of: "{tag}", with: canonical))
        }
        return try await core.call(V1.Accounts.tag, parameters: ["tag": canonical])
    }

    // MARK: Sessions

    /// `POST /v1/sessions`: logs in with an email, a tag or a phone, and stores the session.
    /// A wrong identifier or password is ``GatehouseClientError/rejected(code:message:)`` with
    /// `invalid_credentials`; a failed login leaves a stored session alone. An account with the
    /// authenticator app on is `second_factor_required`: ``beginLogin(identifier:password:device:)``
    /// takes it through its second step.
    /// - Parameter device: a label for the session in the list of sessions (e.g. "iPhone 15").
    @discardableResult
    public func login(identifier: String, password: String, device: String? = nil) async throws -> AuthSession {
        let answer = try await core.call(V1.Sessions.login, LoginRequest(identifier: identifier, password: password, device: device,
                                                                         tokens: core.requestedTokens))
        try core.store(answer)
        return answer
    }

    /// What ``beginLogin(identifier:password:device:)`` leads to.
    public enum LoginStep: Equatable, Sendable {
        /// The session, stored.
        case signedIn(AuthSession)
        /// The password was right and the account asks for its authenticator app's code (or a
        /// recovery code): finish with ``completeLogin(challenge:code:recoveryCode:device:)``
        /// before ``SecondFactorChallenge/expiresAt``.
        case secondFactorRequired(SecondFactorChallenge)
    }

    /// `POST /v1/sessions`, for accounts that may have a second factor: the stored session, or
    /// the challenge of the second step. Every other refusal is thrown as by
    /// ``login(identifier:password:device:)`` (which throws `second_factor_required` instead).
    public func beginLogin(identifier: String, password: String, device: String? = nil) async throws -> LoginStep {
        let captured = ProblemBox()
        do {
            let answer = try await GatehouseClient.$problemCapture.withValue(captured) {
                try await core.call(V1.Sessions.login, LoginRequest(identifier: identifier, password: password, device: device,
                                                                    tokens: core.requestedTokens))
            }
            try core.store(answer)
            return .signedIn(answer)
        } catch let error as GatehouseClientError where error.code == .secondFactorRequired {
            guard let challenge = captured.value?.secondFactor else { throw error }
            return .secondFactorRequired(challenge)
        }
    }

    /// `POST /v1/sessions/second-factor`: finishes a login with the authenticator app's `code` or
    /// a `recoveryCode` (one of the two), and stores the session. A wrong code is `invalid_code`
    /// (``lastProblem`` has `attemptsLeft`); a challenge used up or expired is
    /// `login_challenge_invalid`: log in with the password again.
    @discardableResult
    public func completeLogin(challenge: SecondFactorChallenge, code: String? = nil, recoveryCode: String? = nil, device: String? = nil) async throws -> AuthSession {
        let answer = try await core.call(V1.SecondFactors.complete,
                                         SecondFactorLogin(challenge: challenge.challenge, code: code, recoveryCode: recoveryCode, device: device,
                                                           tokens: core.requestedTokens))
        try core.store(answer)
        return answer
    }

    /// `GET /v1/sessions`: my sessions, newest first; ``SessionInfo/current`` marks this one.
    public func sessions() async throws -> [SessionInfo] {
        let list = try await core.call(V1.Sessions.list)
        return list.sessions
    }

    /// `DELETE /v1/sessions/{id}`: ends one of my sessions (another account's id is `session_not_found`).
    public func endSession(id: UUID) async throws {
        _ = try await core.call(V1.Sessions.end, parameters: ["id": id.uuidString.lowercased()])
    }

    /// `DELETE /v1/sessions?scope=others`: ends every session but this one; returns how many ended.
    @discardableResult
    public func endOtherSessions() async throws -> Int {
        let answer = try await core.call(V1.Sessions.endOthers, EndSessionsQuery(scope: .others))
        return answer.revoked
    }

    /// `GET /v1/me/events`: my account's security events, newest first — sign-ins (failed ones
    /// counted per address and hour), password, email and phone changes, sessions ended — a page
    /// at a time: pass the previous page's ``SecurityEventPage/nextCursor`` for the next.
    public func securityEvents(cursor: String? = nil, limit: Int? = nil) async throws -> SecurityEventPage {
        try await core.call(V1.Accounts.myEvents, PageQuery(cursor: cursor, limit: limit))
    }

    // MARK: Push

    /// `POST /v1/me/devices`: registers this session's push token (``PushRegistration`` calls it).
    @discardableResult
    public func registerDevice(_ registration: DeviceRegistration) async throws -> PushDevice {
        try await core.call(V1.Accounts.registerDevice, registration)
    }

    /// `GET /v1/me/devices`: my devices that receive pushes; ``PushDevice/current`` marks this session's.
    public func devices() async throws -> [PushDevice] {
        try await core.call(V1.Accounts.devices).items
    }

    /// `DELETE /v1/me/devices/{id}`: stops pushes to one of my devices.
    public func removeDevice(id: UUID) async throws {
        _ = try await core.call(V1.Accounts.removeDevice, parameters: ["id": id.uuidString.lowercased()])
    }

    /// `GET /v1/me/notifications`: how pushes speak to me.
    public func notificationSettings() async throws -> NotificationSettings {
        try await core.call(V1.Accounts.notificationSettings)
    }

    /// `PATCH /v1/me/notifications`: `previews: false` hides a message's sender and text on the lock screen.
    @discardableResult
    public func updateNotificationSettings(_ update: NotificationSettingsUpdate) async throws -> NotificationSettings {
        try await core.call(V1.Accounts.updateNotificationSettings, update)
    }

    /// `DELETE /v1/sessions/current`: ends the session on the server and forgets it here. The
    /// session is forgotten locally whatever happens; a 401 (already ended or expired) counts
    /// as success, while a transport or server failure is still thrown so an app may say the
    /// server did not hear it (the token then dies at its expiry).
    public func logout() async throws {
        defer { try? sessionStore.clear() }
        guard session != nil else { return }
        do {
            _ = try await core.call(V1.Sessions.logout)
        } catch GatehouseClientError.sessionExpired {
            return
        }
    }

    // MARK: Recovery

    /// `POST /v1/recovery/code`: sends a password-recovery code to an email address. Always
    /// answers the same: an unknown or unconfirmed address is sent nothing.
    public func requestRecoveryCode(email: String) async throws -> CodeSent {
        try await core.call(V1.Accounts.recoveryCode, CodeRequest(email: email))
    }

    /// `POST /v1/recovery/code`: sends a password-recovery code by SMS to a verified phone.
    public func requestRecoveryCode(phone: String) async throws -> CodeSent {
        try await core.call(V1.Accounts.recoveryCode, CodeRequest(phone: phone))
    }

    /// `POST /v1/recovery`: sets the new password with the code. Every session of the account
    /// ends (this client's stored one too, if it belonged to it: log in again).
    public func recoverPassword(_ request: RecoveryRequest) async throws {
        _ = try await core.call(V1.Accounts.recover, request)
    }

    // MARK: Profile

    /// `GET /v1/me`: my account.
    public func me() async throws -> Account {
        try await core.call(V1.Accounts.me)
    }

    /// `PATCH /v1/me`: changes what `update` sets (a merge patch: `.some(nil)` clears a member).
    @discardableResult
    public func updateProfile(_ update: ProfileUpdate) async throws -> Account {
        try await core.call(V1.Accounts.updateProfile, update)
    }

    /// `POST /v1/me/password`: changes the password; every other session ends.
    public func changePassword(current: String, new: String) async throws {
        _ = try await core.call(V1.Accounts.changePassword, PasswordChange(currentPassword: current, newPassword: new))
    }

    /// `DELETE /v1/me`: deletes the account (what Apple's App Store Review Guideline 5.1.1(v) asks
    /// an app to offer). Every session ends, this one too, so the stored session is forgotten; the
    /// data is erased at the answer's `erasureAt`, unless the person logs in with their password
    /// before then. Refused (409) while the wallet holds money (`wallet_not_empty`) or the account
    /// owns an enabled app (`apps_enabled`).
    @discardableResult
    public func deleteAccount(currentPassword: String) async throws -> AccountDeletion {
        let deletion = try await core.call(V1.Accounts.deleteMe, AccountDeletionRequest(currentPassword: currentPassword))
        try? sessionStore.clear()
        return deletion
    }

    // MARK: Passkeys

    /// `POST /v1/me/passkeys/options`: the options to hand to the platform (on iOS,
    /// ``PasskeyCreationOptions/challengeData`` and ``PasskeyCreationOptions/userIDData`` go to
    /// `ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: options.rp.id)
    /// .createCredentialRegistrationRequest(challenge:name:userID:)`), after a step-up: the current
    /// password and, when I have a second factor (``SecondFactorStatus/totp`` or
    /// ``SecondFactorStatus/passkeys``), the app's `code`, a `recoveryCode` or a `passkey` assertion
    /// (its options from ``passkeyStepUpOptions()``).
    public func passkeyCreationOptions(currentPassword: String, code: String? = nil, recoveryCode: String? = nil,
                                       passkey: PasskeyAssertion? = nil) async throws -> PasskeyCreationOptions {
        try await core.call(V1.Passkeys.creationOptions,
                            PasskeyOptionsRequest(currentPassword: currentPassword, code: code, recoveryCode: recoveryCode, passkey: passkey))
    }

    /// `POST /v1/me/passkeys/step-up-options`: the options of an assertion with one of my passkeys
    /// that proves a step-up (``passkeyCreationOptions(currentPassword:code:recoveryCode:passkey:)``,
    /// ``removePasskey(id:currentPassword:code:recoveryCode:passkey:)``, the app's enrolment).
    public func passkeyStepUpOptions() async throws -> PasskeyRequestOptions {
        try await core.call(V1.Passkeys.stepUpOptions)
    }

    /// `POST /v1/me/passkeys`: keeps the credential the platform made (on iOS,
    /// ``PasskeyRegistrationCredential/init(credentialID:clientDataJSON:attestationObject:)`` from
    /// `ASAuthorizationPlatformPublicKeyCredentialRegistration`), named `name` in my list.
    public func registerPasskey(_ credential: PasskeyRegistrationCredential, name: String? = nil) async throws -> Passkey {
        try await core.call(V1.Passkeys.register, PasskeyRegistration(credential: credential, name: name))
    }

    /// `GET /v1/me/passkeys`: my passkeys, newest first.
    public func passkeys() async throws -> [Passkey] {
        try await core.call(V1.Passkeys.list).passkeys
    }

    /// `DELETE /v1/me/passkeys/{id}`: removes one of my passkeys, after a step-up (as for adding one).
    public func removePasskey(id: UUID, currentPassword: String, code: String? = nil, recoveryCode: String? = nil,
                              passkey: PasskeyAssertion? = nil) async throws {
        _ = try await core.call(V1.Passkeys.remove, PasskeyRemoval(currentPassword: currentPassword, code: code, recoveryCode: recoveryCode, passkey: passkey),
                                parameters: ["id": id.uuidString.lowercased()])
    }

    /// `POST /v1/sessions/passkey/options`: the options of a login with a passkey — without a
    /// password (`challenge` nil: the platform offers this site's passkeys), or as the second step
    /// of a password login (its `challenge`). On iOS, ``PasskeyRequestOptions/challengeData`` goes
    /// to `createCredentialAssertionRequest(challenge:)`.
    public func passkeyLoginOptions(for challenge: SecondFactorChallenge? = nil) async throws -> PasskeyRequestOptions {
        try await core.call(V1.Passkeys.requestOptions, PasskeyLoginOptionsRequest(challenge: challenge?.challenge))
    }

    /// `POST /v1/sessions/passkey`: logs in with the platform's assertion (on iOS,
    /// ``PasskeyAssertion/init(credentialID:clientDataJSON:authenticatorData:signature:userHandle:)``
    /// from `ASAuthorizationPlatformPublicKeyCredentialAssertion`), finishing `challenge`'s password
    /// login when given; stores the session.
    @discardableResult
    public func loginWithPasskey(_ assertion: PasskeyAssertion, challenge: SecondFactorChallenge? = nil, device: String? = nil) async throws -> AuthSession {
        let answer = try await core.call(V1.Passkeys.login, PasskeyLogin(credential: assertion, challenge: challenge?.challenge, device: device,
                                                                         tokens: core.requestedTokens))
        try core.store(answer)
        return answer
    }

    // MARK: Second factors

    /// `GET /v1/me/second-factors`: whether the authenticator app is on, and the recovery codes left.
    public func secondFactors() async throws -> SecondFactorStatus {
        try await core.call(V1.SecondFactors.status)
    }

    /// `POST /v1/me/totp`: a new secret for the authenticator app, shown this once (``TOTPEnrolment/uri``
    /// for a QR code, ``TOTPEnrolment/secret`` to type); nothing changes until ``confirmTOTP(code:)``.
    /// A step-up: the current password, and a `passkey` assertion when I have passkeys.
    public func enrolTOTP(currentPassword: String, passkey: PasskeyAssertion? = nil) async throws -> TOTPEnrolment {
        try await core.call(V1.SecondFactors.enrolTOTP, TOTPEnrolmentRequest(currentPassword: currentPassword, passkey: passkey))
    }

    /// `POST /v1/me/totp/confirm`: turns the app on with its first code; answers the ten recovery
    /// codes, shown this once.
    public func confirmTOTP(code: String) async throws -> RecoveryCodes {
        try await core.call(V1.SecondFactors.confirmTOTP, CodeVerification(code: code))
    }

    /// `DELETE /v1/me/totp`: turns the app off with the current password and its `code`, a `recoveryCode` or a `passkey` assertion.
    public func disableTOTP(currentPassword: String, code: String? = nil, recoveryCode: String? = nil, passkey: PasskeyAssertion? = nil) async throws {
        _ = try await core.call(V1.SecondFactors.disableTOTP,
                                SecondFactorProof(currentPassword: currentPassword, code: code, recoveryCode: recoveryCode, passkey: passkey))
    }

    /// `POST /v1/me/recovery-codes`: ten new recovery codes (the old ones stop working), with the
    /// current password and the app's `code`, a `recoveryCode` or a `passkey` assertion.
    public func renewRecoveryCodes(currentPassword: String, code: String? = nil, recoveryCode: String? = nil,
                                   passkey: PasskeyAssertion? = nil) async throws -> RecoveryCodes {
        try await core.call(V1.SecondFactors.renewRecoveryCodes,
                            SecondFactorProof(currentPassword: currentPassword, code: code, recoveryCode: recoveryCode, passkey: passkey))
    }

    /// `POST /v1/me/email`: makes `email` pending and sends it a code; the current address
    /// keeps working until ``verifyEmailChange(code:)``. The server asks for the current password
    /// (a new address is a new way into the account).
    public func requestEmailChange(_ email: String, currentPassword: String) async throws -> CodeSent {
        try await core.call(V1.Accounts.requestEmailChange, EmailChangeRequest(email: email, currentPassword: currentPassword))
    }

    /// `POST /v1/me/email/verify`: switches to the pending address with its code.
    @discardableResult
    public func verifyEmailChange(code: String) async throws -> Account {
        try await core.call(V1.Accounts.verifyEmailChange, CodeVerification(code: code))
    }

    /// `DELETE /v1/me/email`: drops the pending address.
    @discardableResult
    public func cancelEmailChange() async throws -> Account {
        try await core.call(V1.Accounts.cancelEmailChange)
    }

    /// `POST /v1/me/phone`: sends an SMS code to a phone to attach it to the account; needs the
    /// current password.
    public func requestPhoneVerification(_ phone: String, currentPassword: String) async throws -> CodeSent {
        try await core.call(V1.Accounts.requestPhoneVerification, PhoneVerificationRequest(phone: phone, currentPassword: currentPassword))
    }

    /// `POST /v1/me/phone/verify`: attaches `phone` as verified with the code it received.
    @discardableResult
    public func verifyPhone(_ phone: String, code: String) async throws -> Account {
        try await core.call(V1.Accounts.verifyPhone, CodeVerification(code: code, phone: phone))
    }

    /// `PUT /v1/me/avatar`: uploads an image as the avatar.
    /// - Parameters:
    ///   - data: the image's bytes, at most the server's `GATEHOUSE_AVATAR_MAX_BYTES` (2 MiB).
    ///   - contentType: `image/png`, `image/jpeg`, `image/gif` or `image/webp`, matching the bytes.
    @discardableResult
    public func uploadAvatar(data: Data, contentType: String) async throws -> Account {
        try await core.call(V1.Accounts.uploadAvatar, RawBody(data: data, contentType: contentType))
    }

    /// `DELETE /v1/me/avatar`: removes the avatar.
    @discardableResult
    public func removeAvatar() async throws -> Account {
        try await core.call(V1.Accounts.removeAvatar)
    }
}
