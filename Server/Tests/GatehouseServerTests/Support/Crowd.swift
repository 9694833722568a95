import AsyncHTTPClient
import Foundation
import GatehouseAPI
import HTTPTypes
import NIOCore
import NIOHTTP1

/// Many clients at once, each on its own connection. The test client sends its requests one after
/// another on a single connection, which the server answers in turn: races need this instead.
struct Crowd: Sendable {
    struct Answer: Sendable {
        var status: Int
        var headers: HTTPHeaders
        var body: String
        /// The error code: the `/api` header, or the `/v1` problem's `code`.
        var code: String? {
            if let header = headers.first(name: "X-Error-Code") { return header }
            let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
            return object?["code"] as? String
        }
        /// The body as a `/v1` wire type.
        func decoded<T: Decodable>(as type: T.Type) throws -> T { try V1.decoder.decode(type, from: Data(body.utf8)) }
    }

    private let client: HTTPClient
    private let port: Int

    /// A pool of up to `connections` connections to the server on `port`, for `body`'s requests.
    static func with<Value: Sendable>(
        port: Int, connections: Int, _ body: @Sendable (Crowd) async throws -> Value
    ) async throws -> Value {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(30), concurrentHTTP1ConnectionsPerHostSoftLimit: connections)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            let value = try await body(Crowd(client: client, port: port))
            try await client.shutdown()
            return value
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    /// POSTs every body to `path` at the same moment.
    static func post(port: Int, path: String, bodies: [String], contentType: String) async throws -> [Answer] {
        try await with(port: port, connections: bodies.count) { crowd in
            try await withThrowingTaskGroup(of: Answer.self) { group in
                for body in bodies {
                    group.addTask { try await crowd.post(path, body: body, contentType: contentType) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
    }

    /// One `POST`, on a connection of the pool; `token` goes as `Authorization: Bearer`.
    func post(
        _ path: String, body: String, contentType: String = "application/json", token: String? = nil, headers: HTTPFields = [:]
    ) async throws -> Answer {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: contentType)
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        for field in headers { request.headers.add(name: field.name.rawName, value: field.value) }
        request.body = .bytes(ByteBuffer(string: body))
        let response = try await client.execute(request, timeout: .seconds(60))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return Answer(status: Int(response.status.code), headers: response.headers, body: String(buffer: bytes))
    }
}
