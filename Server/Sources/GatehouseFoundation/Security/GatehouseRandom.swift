import Foundation

/// Where one-time codes and tokens come from. Live: the system's cryptographic generator.
/// Tests inject a sequence they know, as they inject the clock, so a test can use the code a
/// server will send without reading it back or waiting for it.
public struct GatehouseRandom: Sendable {
    /// `length` decimal digits.
    public var code: @Sendable (_ length: Int) -> String
    /// 256 random bits, base64url without padding (43 characters).
    public var token: @Sendable () -> String
    public init(code: @escaping @Sendable (Int) -> String, token: @escaping @Sendable () -> String) {
        self.code = code
        self.token = token
    }
    public static let live = GatehouseRandom(code: Secrets.systemCode, token: Secrets.systemToken)
}
