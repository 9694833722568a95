import Foundation
import GatehouseAPI

extension GatehouseVersion {
    /// The `User-Agent` every request of the SDK carries, so that an operator sees which SDK
    /// version a client runs (and a session opened without a device label is named by it): the
    /// app's name and version when its bundle has them, then `GatehouseKit/<version>` and the
    /// system, e.g. `Wallet/2.3 GatehouseKit/1.1.0 (iOS 18.1.0)`.
    public static let userAgent: String = {
        let info = Bundle.main.infoDictionary ?? [:]
        var parts: [String] = []
        if let name = info["CFBundleName"] as? String, let version = info["CFBundleShortVersionString"] as? String {
            parts.append("\(token(name))/\(token(version))")
        }
        let system = ProcessInfo.processInfo.operatingSystemVersion
        parts.append("GatehouseKit/\(current) (\(systemName) \(system.majorVersion).\(system.minorVersion).\(system.patchVersion))")
        return parts.joined(separator: " ")
    }()

    private static var systemName: String {
        #if os(iOS)
        "iOS"
        #elseif os(macOS)
        "macOS"
        #elseif os(tvOS)
        "tvOS"
        #elseif os(watchOS)
        "watchOS"
        #elseif os(visionOS)
        "visionOS"
        #elseif os(Linux)
        "Linux"
        #else
        "unknown"
        #endif
    }

    /// A product token as HTTP allows it (RFC 9110 `token`): anything else becomes `-`.
    private static func token(_ text: String) -> String {
        let allowed = Set("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
        let cleaned = String(text.map { allowed.contains($0) ? $0 : "-" })
        return cleaned.isEmpty ? "-" : cleaned
    }
}
