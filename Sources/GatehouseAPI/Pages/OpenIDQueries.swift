import Foundation

/// A query of the OpenID Connect provider: named parameters of free text, each read by the provider's own rule (a bad
/// one answers a page or a redirect, as OAuth says, never a problem document).
public protocol OAuthQuery: EndpointQuery {
    /// Every parameter's name, in the order the document lists them.
    static var names: [String] { get }
    /// The parameters given, by name.
    var values: [String: String] { get }
    /// Makes one of the parameters given, by name.
    init(values: [String: String])
}

extension OAuthQuery {
    /// Every parameter, as free text (the OAuth rules are checked by the server, with OAuth's errors).
    public static var parameters: [QueryParameter] { names.map { QueryParameter($0, .text) } }

    /// Reads it from a request's query; a value against its parameter's rule throws ``QueryError``.
    public init(from query: QueryValues) throws {
        var values: [String: String] = [:]
        for name in Self.names { values.put(name, query.text(name)) }
        self.init(values: values)
    }
}

/// An authorization request in the address (RFC 6749 §4.1.1, RFC 7636 §4.3, OpenID Connect Core §3.1.2.1).
public struct OpenIDAuthorizationQuery: OAuthQuery, Equatable {
    /// The parameters of an authorization request (OpenID Connect Core 1.0 §3.1.2.1).
    public static let names = ["response_type", "client_id", "redirect_uri", "scope", "state", "nonce", "code_challenge", "code_challenge_method",
                               "prompt", "max_age", "ui_locales", "login_hint", "response_mode", "request", "request_uri"]
    /// The query's values to send, by name; absent parameters are left out.
    public var values: [String: String]
    /// Makes one of its members, each as its property describes.
    public init(values: [String: String]) { self.values = values }
}

/// An RP-initiated logout request (OpenID Connect RP-Initiated Logout 1.0 §2).
public struct OpenIDLogoutQuery: OAuthQuery, Equatable {
    /// The parameters of RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0 §2).
    public static let names = ["id_token_hint", "post_logout_redirect_uri", "state", "client_id", "ui_locales"]
    /// The query's values to send, by name; absent parameters are left out.
    public var values: [String: String]
    /// Makes one of its members, each as its property describes.
    public init(values: [String: String]) { self.values = values }
}
