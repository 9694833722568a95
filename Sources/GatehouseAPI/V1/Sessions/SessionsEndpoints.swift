import Foundation

extension V1 {
    /// Sessions: logging in, my sessions, ending them.
    public enum Sessions {
        /// Logs in with an email, a tag or a phone; answers a new session.
        public static let login = Endpoint<LoginRequest, AuthSession>(.post, "/v1/sessions", success: 201, access: .anyone)
            .operation("logIn", "Log in", tags: "Sessions")
            .errors([400: [.invalidCredentials, .missingParameter, .fieldTooLong, .malformedBody], 403: [.accountLocked, .secondFactorRequired]])
            .shared(.payloadTooLarge, .unsupportedMediaType, .tooManyRequests, .unexpectedProblem)
        /// Renews signed tokens: a refresh token (it works once) for a new access token and the next refresh token.
        public static let refresh = Endpoint<RefreshRequest, AuthSession>(.post, "/v1/sessions/refresh", access: .anyone)
            .operation("refreshTokens", "Renew signed tokens with a refresh token", tags: "Sessions")
            .errors([400: [.refreshTokenInvalid, .missingParameter, .fieldTooLong, .malformedBody]])
            .shared(.payloadTooLarge, .unsupportedMediaType, .unexpectedProblem)
        /// My sessions, newest first.
        public static let list = Endpoint<NoContent, SessionList>(.get, "/v1/sessions")
            .operation("listSessions", "List my sessions", tags: "Sessions")
            .shared(.unauthorized, .unexpectedProblem)
        /// Ends every session but this one (`?scope=others`, required).
        public static let endOthers = Endpoint<EndSessionsQuery, SessionsRevoked>(.delete, "/v1/sessions")
            .operation("revokeOtherSessions", "End all my sessions but this one", tags: "Sessions")
            .errors([400: [.invalidParameter]])
            .shared(.unauthorized, .unexpectedProblem)
        /// Logs out: ends the session making the request.
        public static let logout = Endpoint<NoContent, NoContent>(.delete, "/v1/sessions/current", success: 204)
            .operation("logOut", "Log out (end the session making the request)", tags: "Sessions")
            .shared(.unauthorized, .unexpectedProblem)
        /// Ends one of my sessions.
        public static let end = Endpoint<NoContent, NoContent>(.delete, "/v1/sessions/{id}", success: 204)
            .operation("revokeSession", "End one of my sessions", tags: "Sessions")
            .errors([404: [.sessionNotFound]])
            .shared(.unauthorized, .unexpectedProblem)
            .uuid(notFound: .sessionNotFound)

        /// Every operation above (the tests check it against the router and the OpenAPI document).
        public static let all: [any EndpointDeclaration] = [login, refresh, list, endOthers, logout, end]
    }
}

/// `DELETE /v1/sessions?scope=others`: which sessions to end (every one but the caller's; the
/// parameter makes the intent explicit, so a bare `DELETE /v1/sessions` ends nothing).
public struct EndSessionsQuery: EndpointQuery, Equatable {
    /// Which sessions end: every other one (mine stays).
    public enum Scope: String, Sendable, CaseIterable {
        /// Every session but the caller's own.
        case others
    }
    /// Which sessions end.
    public var scope: Scope
    /// Makes one of its members, each as its property describes.
    public init(scope: Scope = .others) { self.scope = scope }
    /// Every parameter the operation reads, in the order the document lists them.
    public static let parameters: [QueryParameter] = [.choice("scope", Scope.self, required: true)]
    /// Reads it from a request's query; a value against its parameter's rule throws ``QueryError``.
    public init(from query: QueryValues) throws { self.init(scope: try query.required("scope", as: Scope.self)) }
    /// The query's values to send, by name; absent parameters are left out.
    public var values: [String: String] { ["scope": scope.rawValue] }
}
