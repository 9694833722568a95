import Foundation

/// Where a push goes: Apple's push service or Firebase Cloud Messaging.
public enum PushPlatform: String, Codable, Sendable, CaseIterable {
    case apns
    case fcm
}

/// Which APNs environment a token belongs to: a development build's tokens are the sandbox's.
public enum APNsEnvironment: String, Codable, Sendable, CaseIterable {
    case sandbox
    case production
}

/// `POST /v1/me/devices`: the token the OS gave the app, for this session.
public struct DeviceRegistration: Codable, Sendable, Equatable {
    public var platform: PushPlatform
    /// APNs: the device token in hex; FCM: the registration token.
    public var token: String
    /// APNs: the app's bundle id (the `apns-topic`).
    public var bundleId: String?
    /// APNs: `sandbox` for a development build, `production` otherwise (the default).
    public var environment: APNsEnvironment?
    /// The language of the app (`en`, `ru`): pushes are written in it. By default the account's.
    public var language: String?

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
    public var id: UUID
    public var platform: PushPlatform
    /// The token's last six characters, to tell devices apart.
    public var tokenHint: String
    public var bundleId: String?
    public var environment: APNsEnvironment?
    public var language: String?
    /// Whether it belongs to the session asking.
    public var current: Bool
    public var createdAt: Date

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

public struct PushDeviceList: Codable, Sendable, Equatable {
    public var items: [PushDevice]
    public init(items: [PushDevice]) { self.items = items }
}

/// How pushes speak to me.
public struct NotificationSettings: Codable, Sendable, Equatable {
    /// Whether a message's push shows its sender and text (`true`, the default) or only "New
    /// message" (for a lock screen others see). Mute a chat with `PATCH /v1/chats/{id}`.
    public var previews: Bool
    public init(previews: Bool) { self.previews = previews }
}

/// `PATCH /v1/me/notifications`: what to change (absent members stay).
public struct NotificationSettingsUpdate: Codable, Sendable, Equatable {
    public var previews: Bool?
    public init(previews: Bool? = nil) { self.previews = previews }
}
