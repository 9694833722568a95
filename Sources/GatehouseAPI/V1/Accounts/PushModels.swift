import Foundation

/// Where a push goes: Apple's push service or Firebase Cloud Messaging.
public enum PushPlatform: String, Codable, Sendable, CaseIterable {
    /// Apple Push Notification service (an iOS app).
    case apns
    /// Firebase Cloud Messaging (an Android app, or iOS through Firebase).
    case fcm
}

/// Which APNs environment a token belongs to: a development build's tokens are the sandbox's.
public enum APNsEnvironment: String, Codable, Sendable, CaseIterable {
    /// APNs's development servers (an app built for debugging).
    case sandbox
    /// APNs's production servers (TestFlight and the App Store).
    case production
}

/// `POST /v1/me/devices`: the token the OS gave the app, for this session.
public struct DeviceRegistration: Codable, Sendable, Equatable {
    /// The push service the token is for.
    public var platform: PushPlatform
    /// APNs: the device token in hex; FCM: the registration token.
    public var token: String
    /// APNs: the app's bundle id (the `apns-topic`).
    public var bundleId: String?
    /// APNs: `sandbox` for a development build, `production` otherwise (the default).
    public var environment: APNsEnvironment?
    /// The language of the app (`en`, `ru`): pushes are written in it. By default the account's.
    public var language: String?

    /// Makes one of its members, each as its property describes.
    public init(platform: PushPlatform, token: String, bundleId: String? = nil, environment: APNsEnvironment? = nil, language: String? = nil) {
        self.platform = platform
        self.token = token
        self.bundleId = bundleId
        self.environment = environment
        self.language = language
    }
}

/// A device that receives my pushes (never its whole token).
public struct PushDevice: Codable, Sendable, Equatable {
    /// Its id.
    public var id: UUID
    /// The push service the token is for.
    public var platform: PushPlatform
    /// The token's last six characters, to tell devices apart.
    public var tokenHint: String
    /// The app's bundle id (APNs's topic).
    public var bundleId: String?
    /// Which APNs servers the token is for.
    public var environment: APNsEnvironment?
    /// The language its notifications are written in (`en`, `ru`).
    public var language: String?
    /// Whether it belongs to the session asking.
    public var current: Bool
    /// When it was made.
    public var createdAt: Date

    /// Makes one of its members, each as its property describes.
    public init(id: UUID, platform: PushPlatform, tokenHint: String, bundleId: String?, environment: APNsEnvironment?, language: String?,
                current: Bool, createdAt: Date) {
        self.id = id
        self.platform = platform
        self.tokenHint = tokenHint
        self.bundleId = bundleId
        self.environment = environment
        self.language = language
        self.current = current
        self.createdAt = createdAt
    }
}

/// My devices that take notifications.
public struct PushDeviceList: Codable, Sendable, Equatable {
    /// This page's items, in the list's order.
    public var items: [PushDevice]
    /// Makes one of its members, each as its property describes.
    public init(items: [PushDevice]) { self.items = items }
}

/// How pushes speak to me.
public struct NotificationSettings: Codable, Sendable, Equatable {
    /// Whether a message's push shows its sender and text (`true`, the default) or only "New
    /// message" (for a lock screen others see). Mute a chat with `PATCH /v1/chats/{id}`.
    public var previews: Bool
    /// Makes one of its members, each as its property describes.
    public init(previews: Bool) { self.previews = previews }
}

/// `PATCH /v1/me/notifications`: what to change (absent members stay).
public struct NotificationSettingsUpdate: Codable, Sendable, Equatable {
    /// Whether a notification shows the message's text (else only who wrote).
    public var previews: Bool?
    /// Makes one of its members, each as its property describes.
    public init(previews: Bool? = nil) { self.previews = previews }
}
