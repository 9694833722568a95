import Foundation

/// What the device remembers whoever is signed in: small strings by key. `UserDefaults` by
/// default; tests and previews use ``InMemoryPreferences``.
public protocol DevicePreferences: Sendable {
    /// The value for `key`, if any.
    func string(_ key: String) -> String?
    /// Sets (or, with nil, removes) the value for `key`.
    func set(_ value: String?, for key: String)
}

/// Preferences in `UserDefaults` (a plist on Linux), under a suite name when one is given.
public struct UserDefaultsPreferences: DevicePreferences, @unchecked Sendable {
    private let defaults: UserDefaults

    /// Preferences in the `UserDefaults` suite `suiteName` (the standard one when nil).
    public init(suiteName: String? = nil) {
        self.defaults = suiteName.flatMap(UserDefaults.init(suiteName:)) ?? .standard
    }

    /// The value for `key`, if any.
    public func string(_ key: String) -> String? { defaults.string(forKey: key) }

    /// Sets (or, with nil, removes) the value for `key`.
    public func set(_ value: String?, for key: String) {
        if let value { defaults.set(value, forKey: key) } else { defaults.removeObject(forKey: key) }
    }
}

/// Preferences kept in memory (tests, previews).
public final class InMemoryPreferences: DevicePreferences, @unchecked Sendable {
    private let lock = NSLock()
    private var values: [String: String]

    /// Preferences starting with `values`.
    public init(_ values: [String: String] = [:]) { self.values = values }

    /// The value for `key`, if any.
    public func string(_ key: String) -> String? { lock.withLock { values[key] } }
    /// Sets (or, with nil, removes) the value for `key`.
    public func set(_ value: String?, for key: String) { lock.withLock { values[key] = value } }
}

/// The app's appearance, as the user chose it on the theme screen; the UI reads
/// ``MessengerAppFlow/State/theme`` and applies it (`overrideUserInterfaceStyle` on iOS).
public enum Theme: String, CaseIterable, Equatable, Sendable {
    /// Always light.
    case light
    /// Always dark.
    case dark
    /// As the device is set.
    case system

    static let preferenceKey = "messenger.theme"

    /// The theme stored on the device; `system` until one is chosen.
    static func stored(in preferences: any DevicePreferences) -> Theme {
        preferences.string(preferenceKey).flatMap(Theme.init(rawValue:)) ?? .system
    }
}
