import Foundation
import GatehouseAPI
import GatehouseKit
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// Development support, not part of the SDK an app ships: the terminal demo and the tests read
// codes from a development server's outbox with it.

/// Reads the server's development outbox (`GET /dev/outbox`), standing in for a phone and a
/// mailbox against a development server. It does not exist on production servers.
public struct DevOutboxClient: Sendable {
    /// The development server's base URL.
    public let baseURL: URL
    private let transport: any HTTPTransport

    /// Creates a reader of `baseURL`'s development outbox.
    public init(baseURL: URL, transport: any HTTPTransport = URLSessionTransport()) {
        self.baseURL = baseURL
        self.transport = transport
    }

    /// Messages sent to `destination` (a phone in any format, or an email), newest first.
    public func messages(to destination: String) async throws -> [DevOutboxMessage] {
        var components = URLComponents(url: baseURL.appendingPathComponent(DevAPI.Path.outbox), resolvingAgainstBaseURL: false)!
        components.percentEncodedQuery = "to=" + FormURLEncoding.escape(destination)
        let (data, response) = try await transport.send(URLRequest(url: components.url!))
        guard response.statusCode == 200 else {
            throw GatehouseClientError.server(status: response.statusCode, message: "no development outbox on this server")
        }
        return try JSONDecoder().decode([DevOutboxMessage].self, from: data)
    }

    /// The code of the newest message to `destination`, if any.
    public func latestCode(to destination: String) async throws -> String? {
        try await messages(to: destination).first?.code
    }

    /// Opens the newest link mailed to `email` (a confirmation link), as a person would in a
    /// browser, and returns whether the server accepted it.
    @discardableResult
    public func openLatestLink(to email: String) async throws -> Bool {
        for message in try await messages(to: email) {
            guard let start = message.body.range(of: "http://") ?? message.body.range(of: "https://") else { continue }
            let link = String(message.body[start.lowerBound...].prefix { !$0.isWhitespace })
            // The mail's link names the server's public URL; follow it on the server we talk to.
            guard let url = URL(string: link), let path = URLComponents(url: url, resolvingAgainstBaseURL: false) else { continue }
            var target = URLComponents(url: baseURL, resolvingAgainstBaseURL: false)!
            target.path = path.path
            target.percentEncodedQuery = path.percentEncodedQuery
            // The link opens a page that confirms nothing by itself; its button posts the token.
            var press = URLRequest(url: target.url!)
            press.httpMethod = "POST"
            let (_, response) = try await transport.send(press)
            return response.statusCode == 200
        }
        return false
    }

    /// Pays a top-up on the local payment provider's page (`/dev/payments/{id}`, development
    /// mode's stand-in for Stripe), as a person would press its button in a browser; true when the
    /// page says the wallet was credited. A real provider's page is not this server's: nil.
    public func payLocally(_ page: URL) async throws -> Bool? {
        guard let path = URLComponents(url: page, resolvingAgainstBaseURL: false)?.path, path.hasPrefix("/dev/payments/") else { return nil }
        var target = URLComponents(url: baseURL, resolvingAgainstBaseURL: false)!
        target.path = path
        var press = URLRequest(url: target.url!)
        press.httpMethod = "POST"
        press.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        press.httpBody = Data(("id=" + FormURLEncoding.escape(page.lastPathComponent)).utf8)
        let (data, response) = try await transport.send(press)
        return response.statusCode == 200 && String(decoding: data, as: UTF8.self).contains("credited")
    }
}
