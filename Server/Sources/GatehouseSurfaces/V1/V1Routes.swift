import Foundation
import GatehouseAccounts
import GatehouseAPI
import GatehouseFoundation
import Hummingbird

extension RouterMethods where Context == GatehouseRequestContext {
    /// Adds a `/v1` operation as `GatehouseAPI` declares it: its method and path, the session
    /// checked when it needs one, the JSON body decoded (`V1Body`: 415, 413, 400 naming the
    /// member), and the handler's answer encoded with the declared success status (`204` for
    /// ``NoContent``). Errors become problem documents in `ProblemDocuments`.
    @discardableResult
    package func on<Input: Decodable & Sendable, Output: Encodable & Sendable>(
        _ endpoint: Endpoint<Input, Output>, limits: GatehouseConfiguration.Limits,
        use handler: @escaping @Sendable (Input, Request, Context) async throws -> Output
    ) -> Self {
        on(endpoint) { request, context in
            let input: Input = if let none = NoContent() as? Input { none } else {
                try await V1Body.decode(Input.self, from: request, limits: limits)
            }
            let output = try await handler(input, request, context)
            if Output.self == NoContent.self { return JSONResponse.noContent() }
            return try JSONResponse.make(output, status: .init(code: endpoint.successStatus))
        }
    }

    /// Adds a `/v1` operation whose input is its query string (`EndpointQuery`): read by the
    /// declared parameters' rules after the session check; a value against its rule is 400
    /// `invalid_parameter` naming the parameter and what it takes.
    @discardableResult
    package func on<Query: EndpointQuery, Output: Encodable & Sendable>(
        _ endpoint: Endpoint<Query, Output>, limits: GatehouseConfiguration.Limits,
        use handler: @escaping @Sendable (Query, Request, Context) async throws -> Output
    ) -> Self {
        on(endpoint) { request, context in
            let input = try Query.read(request)
            let output = try await handler(input, request, context)
            if Output.self == NoContent.self { return JSONResponse.noContent() }
            return try JSONResponse.make(output, status: .init(code: endpoint.successStatus))
        }
    }

    /// Adds an operation whose body or answer is not JSON (an image): method, path and the
    /// session check from the declaration, the rest by the handler.
    @discardableResult
    package func on<Input, Output>(_ endpoint: Endpoint<Input, Output>, raw handler: @escaping @Sendable (Request, Context) async throws -> Response) -> Self {
        on(RouterPath(endpoint.path), method: HTTPRequest.Method(rawValue: endpoint.method.rawValue)!) { request, context in
            if endpoint.access == .session { _ = try context.requireSession() }
            return try await handler(request, endpoint.declaration.readPath(context))
        }
    }
}

/// What every `/v1` controller reads from a request the same way.
package struct V1Request {
    package let edge: SurfaceEdge

    /// Who is asking: the client address (behind a trusted balancer, its `X-Forwarded-For`), the
    /// language of what they are sent (`Accept-Language`, English by default), the device label.
    package func origin(_ request: Request, _ context: GatehouseRequestContext, device: String? = nil) -> RequestOrigin {
        RequestOrigin(
            ip: request.clientIP(context: context, trustForwardedFor: edge.trustForwardedFor),
            language: AppLanguage.negotiate(request.headers[.acceptLanguage], fallback: .en),
            device: device ?? request.headers[.userAgent],
            requestID: context.requestID
        )
    }

    /// The account as `/v1` shows it to its owner.
    package func account(_ snapshot: AccountSnapshot) -> Account { snapshot.v1Account(publicURL: edge.publicURL) }

    /// Trimmed; empty strings are absent.
    package func text(_ value: String?) -> String? {
        guard let trimmed = value?.trimmingCharacters(in: .whitespaces), !trimmed.isEmpty else { return nil }
        return trimmed
    }
}

extension EndpointQuery {
    /// The request's query, read by the declared parameters (the last value of a repeated name).
    package static func read(_ request: Request) throws -> Self {
        var values: [String: String] = [:]
        for (name, value) in request.uri.queryParameters { values[String(name)] = String(value) }
        do {
            return try Self(from: QueryValues(values))
        } catch let error as QueryError {
            throw error.problem
        }
    }
}

extension QueryError {
    /// The problem a client gets: 400 `invalid_parameter` on the parameter's name.
    package var problem: GatehouseError {
        if value.isEmpty {
            return GatehouseError.invalid(.invalidParameter, "error.queryParameterRequired", name, expected).on(field: name)
        }
        return GatehouseError.invalid(.invalidParameter, "error.invalidQueryParameter", value, "\(name) (\(expected))").on(field: name)
    }
}
