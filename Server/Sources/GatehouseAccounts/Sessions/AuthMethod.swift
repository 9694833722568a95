/// How a session's person proved who they are, as its signed tokens say (`amr`, RFC 8176): each way in gives
/// its own, and a second step adds one.
package enum AuthMethod: String, Sendable, CaseIterable, Codable {
    /// A password (or a temporary one).
    case pwd
    /// A one-time password: the authenticator app's code, or a recovery code.
    case otp
    /// A passkey kept on its device (hardware-secured key).
    case hwk
    /// A passkey synced between devices (software-secured key).
    case swk
    /// A code sent by SMS.
    case sms
    /// A code or a link sent by mail (RFC 8176 has no value for it; `mail` is ours, as §2 allows).
    case mail
    /// A Sign To Login signature drawn on a phone (ours too).
    case sig
    /// An identity provider's token: Sign in with Apple or Google (ours: RFC 8176 has none for a federated sign-in).
    case fed

    /// The authentication context class (`acr`): `2` when two kinds of factor were shown (something known, had or
    /// is), or a passkey (a device that verified its user), else `1`.
    package static func contextClass(_ methods: [AuthMethod]) -> String {
        var kinds = Set<String>()
        for method in methods {
            switch method {
            case .pwd: kinds.insert("knows")
            case .otp, .sms, .mail: kinds.insert("has")
            case .hwk, .swk: kinds.formUnion(["has", "is"])
            case .sig: kinds.insert("is")
            // What the provider checked is its own: one factor, as a password is.
            case .fed: kinds.insert("federated")
            }
        }
        return kinds.count >= 2 ? "2" : "1"
    }

    /// As the `sessions.methods` column keeps them: space-separated.
    package static func stored(_ methods: [AuthMethod]) -> String { methods.map(\.rawValue).joined(separator: " ") }

    package static func read(_ stored: String) -> [AuthMethod] { stored.split(separator: " ").compactMap { AuthMethod(rawValue: String($0)) } }
}
