import Foundation

/// Where a Redis server is: `redis://[user:password@]host[:port][/db]`.
public struct RedisAddress: Equatable, Sendable {
    public var host: String
    public var port: Int
    public var user: String?
    public var password: String?
    public var database: Int

    public init?(url text: String) {
        guard let url = URLComponents(string: text), url.scheme == "redis", let host = url.host, !host.isEmpty else { return nil }
        self.host = host
        self.port = url.port ?? 6379
        self.user = url.user.flatMap { $0.isEmpty ? nil : $0 }
        self.password = url.password
        let path = url.path.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        guard path.isEmpty || Int(path) != nil else { return nil }
        self.database = Int(path) ?? 0
    }
}
