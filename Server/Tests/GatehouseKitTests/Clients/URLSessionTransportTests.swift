import Foundation
import GatehouseKit
import GatehouseTestSupport
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The default transport against real sockets: cancelling a call ends it at once, and never
/// hangs however its cancellation meets its answer (FoundationNetworking can deadlock there when
/// the URLSession task itself is cancelled; `URLSessionTransport` does not cancel it on Linux).
@Suite("GatehouseKit: URLSessionTransport and cancellation")
struct URLSessionTransportTests {
    @Test("cancelling a call to a server that never answers ends it at once with CancellationError")
    func cancelStalled() async throws {
        let listener = try SilentListener()
        defer { listener.close() }
        let transport = URLSessionTransport(timeout: 60)
        let request = URLRequest(url: URL(string: "http://127.0.0.1:\(listener.port)/v1/me")!)
        let task = Task { try await transport.send(request) }
        try await Task.sleep(for: .milliseconds(100))
        task.cancel()
        // Not a timing check: uncancelled, the call would end after its 60 s timeout with another error.
        let result = await task.result
        guard case .failure(let error) = result else { Issue.record("a call to a silent server cannot succeed"); return }
        #expect(error is CancellationError, "\(error)")
    }

    @Test("calls cancelled at every moment of their answer all end: each with its answer or CancellationError")
    func cancelRacingAnswers() async throws {
        try await withLiveServer { server in
            let transport = URLSessionTransport(timeout: 30)
            let request = URLRequest(url: server.baseURL.appendingPathComponent("health"))
            var answered = 0, cancelled = 0
            for round in 0..<40 {
                let tasks = (0..<8).map { _ in Task { try await transport.send(request) } }
                try await Task.sleep(for: .microseconds(250 * (round % 8)))
                for task in tasks { task.cancel() }
                for task in tasks {
                    switch await task.result {
                    case .success(let (_, response)):
                        #expect(response.statusCode == 200)
                        answered += 1
                    case .failure(let error):
                        #expect(error is CancellationError, "\(error)")
                        cancelled += 1
                    }
                }
            }
            #expect(answered + cancelled == 320)
            #expect(cancelled > 0)
        }
    }
}

/// A TCP port that takes connections (the kernel's backlog) and never reads or answers.
private struct SilentListener {
    let socket: Int32
    let port: Int

    init() throws {
        #if canImport(Glibc)
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = Darwin.socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw POSIXError(.EBADF) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else { throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        socket = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    func close() {
        #if canImport(Glibc)
        _ = Glibc.close(socket)
        #else
        _ = Darwin.close(socket)
        #endif
    }
}
