import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import GatehouseKit

/// Airplane mode for one app under test: its HTTP requests and WebSocket connections go through
/// here to the real server while on; off, requests fail as with no network and the open sockets
/// drop, as a phone's do when it loses the network.
final class NetworkSwitch: HTTPTransport, WebSocketTransport, @unchecked Sendable {
    private let lock = NSLock()
    private var online = true
    private var open: [UUID: any WebSocketConnection] = [:]
    private let http = URLSessionTransport()
    private let sockets = WebSocketTransports.default

    init(online: Bool = true) { self.online = online }

    var isOnline: Bool { lock.withLock { online } }

    func send(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
        guard isOnline else { throw URLError(.notConnectedToInternet) }
        return try await http.send(request)
    }

    func send(_ request: URLRequest, progress: @escaping UploadProgress) async throws -> (Data, HTTPURLResponse) {
        guard isOnline else { throw URLError(.notConnectedToInternet) }
        return try await http.send(request, progress: progress)
    }

    func connect(to url: URL) async throws -> any WebSocketConnection {
        guard isOnline else { throw URLError(.notConnectedToInternet) }
        let connection = try await sockets.connect(to: url)
        let id = UUID()
        lock.withLock { open[id] = connection }
        return Tracked(connection: connection) { [weak self] in _ = self?.lock.withLock { self?.open.removeValue(forKey: id) } }
    }

    /// The network goes: requests fail, open sockets close.
    func goOffline() async {
        let connections = lock.withLock {
            online = false
            defer { open = [:] }
            return Array(open.values)
        }
        for connection in connections { await connection.close() }
    }

    func goOnline() { lock.withLock { online = true } }

    private struct Tracked: WebSocketConnection {
        let connection: any WebSocketConnection
        let onClose: @Sendable () -> Void
        func send(_ text: String) async throws { try await connection.send(text) }
        func receive() async throws -> String? { try await connection.receive() }
        func close() async {
            onClose()
            await connection.close()
        }
    }
}
