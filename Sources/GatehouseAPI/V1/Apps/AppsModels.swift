import Foundation

/// A registered app, as its owner sees it (never its key: only a hint of it).
public struct DeveloperApp: Codable, Sendable, Equatable {
    /// Its id.
    public var id: UUID
    /// Its name.
    public var name: String
    /// The iOS bundle ID, e.g. `com.example.signer`.
    public var bundleId: String
    /// Who answers for the app.
    public var email: String
    /// The app's website.
    public var website: String?
    /// The icon's URL, when one was uploaded.
    public var iconUrl: String?
    /// A disabled app's key is refused on every endpoint.
    public var enabled: Bool
    /// The key's first characters, to tell keys apart (`stl_AbCd…`).
    public var keyHint: String
    /// When it was made.
    public var createdAt: Date
    /// When it last changed.
    public var updatedAt: Date
    /// The similarity at or above which an `/authenticate/` through this app signs the person in
    /// and may sign a document (nil: the server's threshold).
    public var minSimilarity: Double?

    /// Makes one of its members, each as its property describes.
    public init(id: UUID, name: String, bundleId: String, email: String, website: String?, iconUrl: String?, enabled: Bool,
                keyHint: String, createdAt: Date, updatedAt: Date, minSimilarity: Double? = nil) {
        self.id = id
        self.name = name
        self.bundleId = bundleId
        self.email = email
        self.website = website
        self.iconUrl = iconUrl
        self.enabled = enabled
        self.keyHint = keyHint
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.minSimilarity = minSimilarity
    }
}

/// An app and its API key: the answer of registering an app or rotating its key, the only
/// time the key is shown (the server keeps only its hash).
public struct AppWithKey: Codable, Sendable, Equatable {
    /// The app.
    public var app: DeveloperApp
    /// `stl_` and 43 base64url characters; the SDK sends it as `apikey`.
    public var apiKey: String
    /// Makes one of its members, each as its property describes.
    public init(app: DeveloperApp, apiKey: String) {
        self.app = app
        self.apiKey = apiKey
    }
}

/// My apps.
public struct AppList: Codable, Sendable, Equatable {
    /// This page's items, in the list's order.
    public var items: [DeveloperApp]
    /// Makes one of its members, each as its property describes.
    public init(items: [DeveloperApp]) { self.items = items }
}

/// The five fields of a new app (the icon is uploaded after).
public struct NewApp: Codable, Sendable, Equatable {
    /// Its name.
    public var name: String
    /// The iOS app's bundle id.
    public var bundleId: String
    /// The email address.
    public var email: String
    /// http or https.
    public var website: String?
    /// Makes one of its members, each as its property describes.
    public init(name: String, bundleId: String, email: String, website: String? = nil) {
        self.name = name
        self.bundleId = bundleId
        self.email = email
        self.website = website
    }
}

/// What to change of an app; absent members stay.
public struct AppUpdate: Codable, Sendable, Equatable {
    /// Its name.
    public var name: String?
    /// The email address.
    public var email: String?
    /// An empty string removes the website.
    public var website: String?
    /// Whether the app's key works (false turns the app off for everyone who uses it).
    public var enabled: Bool?
    /// The app's acceptance threshold, 0…1 (a value below the server's own is refused: an app may
    /// ask for more, never for less).
    public var minSimilarity: Double?
    /// Makes one of its members, each as its property describes.
    public init(name: String? = nil, email: String? = nil, website: String? = nil, enabled: Bool? = nil, minSimilarity: Double? = nil) {
        self.name = name
        self.email = email
        self.website = website
        self.enabled = enabled
        self.minSimilarity = minSimilarity
    }
}
