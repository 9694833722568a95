import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// Many clients at once, each on its own connection. The test client sends its requests one after
/// another on a single connection, which the server answers in turn: races need this instead.
enum Crowd {
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
    }

    /// POSTs every body to `path` at the same moment.
    static func post(port: Int, path: String, bodies: [String], contentType: String) async throws -> [Answer] {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(30), concurrentHTTP1ConnectionsPerHostSoftLimit: bodies.count)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            let answers = try await withThrowingTaskGroup(of: Answer.self) { group in
                for body in bodies {
                    group.addTask {
                        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
                        request.method = .POST
                        request.headers.add(name: "Content-Type", value: contentType)
                        request.body = .bytes(ByteBuffer(string: body))
                        let response = try await client.execute(request, timeout: .seconds(60))
                        let bytes = try await response.body.collect(upTo: 1 << 20)
                        return Answer(status: Int(response.status.code), headers: response.headers, body: String(buffer: bytes))
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            try await client.shutdown()
            return answers
        } catch {
            try? await client.shutdown()
            throw error
        }
    }
}
