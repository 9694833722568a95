import Foundation
import GatehouseAPI

/// Hands the push token the OS gives the app to the server, for the signed-in session
/// (docs/push.md). The server keeps a device as long as its session: logging out removes it there,
/// and after the next login the same token is registered again.
///
/// ```swift
/// let push = PushRegistration(accounts: accounts, platform: .apns, bundleId: Bundle.main.bundleIdentifier,
///                             environment: .production, language: "ru")
/// // application(_:didRegisterForRemoteNotificationsWithDeviceToken:)
/// Task { try await push.tokenReceived(deviceToken) }
/// // after a login
/// Task { try await push.sessionStarted() }
/// ```
public actor PushRegistration {
    /// The accounts client whose session registers the device.
    public let accounts: AccountsClient
    /// Apple's or Google's push service.
    public let platform: PushPlatform
    /// The app's bundle id (APNs' topic).
    public let bundleId: String?
    /// APNs' sandbox (development builds) or production.
    public let environment: APNsEnvironment?
    /// The language pushes to this device are written in (the account's otherwise).
    public let language: String?
    /// The newest token the OS gave.
    public private(set) var token: String?
    /// The token and session it was last registered for: nothing is sent again for the same pair.
    private var registered: (token: String, session: String)?

    /// A registration of this device's pushes for `accounts`' sessions.
    public init(accounts: AccountsClient, platform: PushPlatform, bundleId: String? = nil, environment: APNsEnvironment? = nil, language: String? = nil) {
        self.accounts = accounts
        self.platform = platform
        self.bundleId = bundleId
        self.environment = environment
        self.language = language
    }

    /// APNs' device token as the OS gives it: registered as lower-case hex.
    @discardableResult
    public func tokenReceived(_ deviceToken: Data) async throws -> PushDevice? {
        try await tokenReceived(deviceToken.map { String(format: "%02x", $0) }.joined())
    }

    /// A token (FCM's registration token, or APNs' in hex). Registered now when signed in, else at
    /// the next ``sessionStarted()``. Answers the device when it was registered.
    @discardableResult
    public func tokenReceived(_ token: String) async throws -> PushDevice? {
        self.token = token
        return try await registerIfNeeded()
    }

    /// Call after a login (or on launch with a restored session): registers the known token for
    /// this session.
    @discardableResult
    public func sessionStarted() async throws -> PushDevice? {
        try await registerIfNeeded()
    }

    /// Call after a logout: the server removed the session's device with the session; the next
    /// session registers the token again.
    public func loggedOut() {
        registered = nil
    }

    private func registerIfNeeded() async throws -> PushDevice? {
        guard let token, let session = accounts.session?.token else { return nil }
        if let registered, registered.token == token, registered.session == session { return nil }
        let device = try await accounts.registerDevice(DeviceRegistration(platform: platform, token: token, bundleId: bundleId,
                                                                           environment: environment, language: language))
        registered = (token, session)
        return device
    }
}
