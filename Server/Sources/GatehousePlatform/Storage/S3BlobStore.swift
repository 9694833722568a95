import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOHTTP1

/// AWS Signature Version 4 for one request (docs.aws.amazon.com, "Signature Version 4 signing
/// process"): the canonical request, the string to sign and the derived key.
package struct SigV4 {
    package var accessKey: String
    package var secretKey: String
    package var region: String
    package var service = "s3"

    /// The headers to add (`x-amz-date`, `x-amz-content-sha256`, `authorization`) for a request
    /// whose other signed header is `host`.
    package func sign(method: String, host: String, path: String, query: [(String, String)], payloadSHA256: String, date: Date) -> [(String, String)] {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        let amzDate = formatter.string(from: date)
        let day = String(amzDate.prefix(8))
        var pairs: [(String, String)] = []
        for (name, value) in query {
            pairs.append((Self.encode(name, keepSlash: false), Self.encode(value, keepSlash: false)))
        }
        pairs.sort { (a: (String, String), b: (String, String)) -> Bool in a.0 == b.0 ? a.1 < b.1 : a.0 < b.0 }
        let canonicalQuery = pairs.map { (pair: (String, String)) -> String in pair.0 + "=" + pair.1 }.joined(separator: "&")
        let headers = [("host", host), ("x-amz-content-sha256", payloadSHA256), ("x-amz-date", amzDate)]
        let signedHeaders = headers.map(\.0).joined(separator: ";")
        let canonicalRequest = [
            method, Self.encode(path, keepSlash: true), canonicalQuery,
            headers.map { "\($0.0):\($0.1)\n" }.joined(), signedHeaders, payloadSHA256,
        ].joined(separator: "\n")
        let scope = "\(day)/\(region)/\(service)/aws4_request"
        let stringToSign = ["AWS4-HMAC-SHA256", amzDate, scope, Self.hex(SHA256.hash(data: Data(canonicalRequest.utf8)))].joined(separator: "\n")
        var key = SymmetricKey(data: Data("AWS4\(secretKey)".utf8))
        for part in [day, region, service, "aws4_request"] {
            key = SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: Data(part.utf8), using: key)))
        }
        let signature = Self.hex(HMAC<SHA256>.authenticationCode(for: Data(stringToSign.utf8), using: key))
        return [
            ("x-amz-date", amzDate),
            ("x-amz-content-sha256", payloadSHA256),
            ("authorization", "AWS4-HMAC-SHA256 Credential=\(accessKey)/\(scope), SignedHeaders=\(signedHeaders), Signature=\(signature)"),
        ]
    }

    /// RFC 3986 encoding as SigV4 wants it: everything but unreserved characters (and `/` in paths).
    package static func encode(_ value: String, keepSlash: Bool) -> String {
        var out = ""
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                out.unicodeScalars.append(UnicodeScalar(byte))
            case UInt8(ascii: "/") where keepSlash:
                out.append("/")
            default:
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }

    package static func hex<D: Sequence>(_ digest: D) -> String where D.Element == UInt8 {
        digest.map { String(format: "%02x", $0) }.joined()
    }

    package init(accessKey: String, secretKey: String, region: String) {
        self.accessKey = accessKey
        self.secretKey = secretKey
        self.region = region
    }
}

/// Blobs in an S3-compatible bucket (AWS S3, MinIO, Ceph, R2...), path-style:
/// `ENDPOINT/BUCKET/PREFIX<key>`, signed with SigV4 through the server's HTTP client. Objects are
/// never rewritten in place: a `put` of a blob already there uploads the same bytes again, which
/// refreshes its time (what the collector's grace period counts from).
package struct S3BlobStore: BlobStore {
    package struct Settings: Sendable {
        package var endpoint: String
        package var bucket: String
        package var region: String = "us-east-1"
        package var accessKey: String
        package var secretKey: String
        package var prefix: String = "blobs/"
        package var timeout: TimeAmount = .seconds(30)
        /// Keys per listing page (S3's own default and maximum is 1,000; tests page with fewer).
        package var listPageSize = 1_000
    
        package init(endpoint: String, bucket: String, region: String = "us-east-1", accessKey: String, secretKey: String, prefix: String = "blobs/", timeout: TimeAmount = .seconds(30)) {
            self.endpoint = endpoint
            self.bucket = bucket
            self.region = region
            self.accessKey = accessKey
            self.secretKey = secretKey
            self.prefix = prefix
            self.timeout = timeout
        }
}

    package let settings: Settings
    package let client: HTTPClient
    private let base: URL
    private let host: String

    package init(settings: Settings, client: HTTPClient) throws {
        guard let url = URL(string: settings.endpoint), let scheme = url.scheme, ["http", "https"].contains(scheme), let hostName = url.host else {
            throw BlobStoreError.backend("GATEHOUSE_S3_ENDPOINT must be an http(s) URL, got \(settings.endpoint)")
        }
        self.settings = settings
        self.client = client
        self.base = url
        if let port = url.port, !(scheme == "http" && port == 80) && !(scheme == "https" && port == 443) {
            host = "\(hostName):\(port)"
        } else {
            host = hostName
        }
    }

    private var signer: SigV4 { SigV4(accessKey: settings.accessKey, secretKey: settings.secretKey, region: settings.region) }

    private func objectPath(_ key: BlobKey) -> String { "/\(settings.bucket)/\(settings.prefix)\(key.hex)" }

    /// One signed request; the status and body.
    private func send(_ method: HTTPMethod, path: String, query: [(String, String)] = [], body: Data? = nil) async throws -> (UInt, ByteBuffer) {
        let response = try await client.execute(signed(method, path: path, query: query, body: body), timeout: settings.timeout)
        let bytes = try await response.body.collect(upTo: 256 << 20)
        return (response.status.code, bytes)
    }

    /// A request signed with SigV4 (`Range` and other headers added after are not signed, as S3 allows).
    private func signed(_ method: HTTPMethod, path: String, query: [(String, String)] = [], body: Data? = nil) -> HTTPClientRequest {
        let payloadHash = SigV4.hex(SHA256.hash(data: body ?? Data()))
        let basePath = base.path.hasSuffix("/") ? String(base.path.dropLast()) : base.path
        let fullPath = basePath + path
        var url = "\(base.scheme!)://\(host)\(SigV4.encode(fullPath, keepSlash: true))"
        if !query.isEmpty {
            url += "?" + query.map { "\(SigV4.encode($0.0, keepSlash: false))=\(SigV4.encode($0.1, keepSlash: false))" }.joined(separator: "&")
        }
        var request = HTTPClientRequest(url: url)
        request.method = method
        request.headers.add(name: "host", value: host)
        for (name, value) in signer.sign(method: method.rawValue, host: host, path: fullPath, query: query, payloadSHA256: payloadHash, date: Date()) {
            request.headers.add(name: name, value: value)
        }
        if let body {
            request.body = .bytes(ByteBuffer(data: body))
            request.headers.add(name: "content-length", value: String(body.count))
        }
        return request
    }

    private func failure(_ operation: String, _ status: UInt, _ body: ByteBuffer) -> BlobStoreError {
        let code = Self.element("Code", in: String(buffer: body)) ?? "HTTP \(status)"
        return .backend("S3 \(operation): \(code)")
    }

    package func put(_ data: Data) async throws -> BlobKey {
        let key = BlobKey(of: data)
        let (status, body) = try await send(.PUT, path: objectPath(key), body: data)
        guard (200..<300).contains(status) else { throw failure("put", status, body) }
        return key
    }

    package func get(_ key: BlobKey) async throws -> Data? {
        let (status, body) = try await send(.GET, path: objectPath(key))
        if status == 404 { return nil }
        guard status == 200 else { throw failure("get", status, body) }
        let data = Data(buffer: body)
        guard BlobKey(of: data) == key else { throw BlobStoreError.corrupt(key) }
        return data
    }

    package func stream(_ key: BlobKey, range: ClosedRange<Int>?, chunkSize: Int, to write: (ByteBuffer) async throws -> Void) async throws {
        var request = signed(.GET, path: objectPath(key))
        if let range { request.headers.add(name: "range", value: "bytes=\(range.lowerBound)-\(range.upperBound)") }
        // The body comes as the connection delivers it, with backpressure: the next part is read
        // only after the last one was written on.
        let response = try await client.execute(request, timeout: settings.timeout)
        guard response.status == .ok || response.status == .partialContent else {
            throw failure("get", response.status.code, try await response.body.collect(upTo: 1 << 20))
        }
        var checker = BlobStreamChecker(key: key, whole: range == nil)
        for try await part in response.body {
            var part = part
            while part.readableBytes > 0, let chunk = part.readSlice(length: min(max(1, chunkSize), part.readableBytes)) {
                try await checker.take(chunk, write)
            }
        }
        try await checker.finish(expected: range.map(\.count), write)
    }

    package func delete(_ key: BlobKey) async throws {
        let (status, body) = try await send(.DELETE, path: objectPath(key))
        guard (200..<300).contains(status) || status == 404 else { throw failure("delete", status, body) }
    }

    package func keys(putBefore date: Date) async throws -> [BlobKey] {
        var found: [BlobKey] = []
        var token: String?
        let parser = ISO8601DateFormatter()
        parser.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        repeat {
            var query = [("list-type", "2"), ("max-keys", String(settings.listPageSize)), ("prefix", settings.prefix)]
            if let token { query.append(("continuation-token", token)) }
            let (status, body) = try await send(.GET, path: "/\(settings.bucket)", query: query)
            guard status == 200 else { throw failure("list", status, body) }
            let xml = String(buffer: body)
            for entry in Self.elements("Contents", in: xml) {
                guard let name = Self.element("Key", in: entry), name.hasPrefix(settings.prefix),
                      let key = BlobKey(hex: String(name.dropFirst(settings.prefix.count))),
                      let stamp = Self.element("LastModified", in: entry),
                      let modified = parser.date(from: stamp) ?? ISO8601DateFormatter().date(from: stamp),
                      modified < date
                else { continue }
                found.append(key)
            }
            token = Self.element("IsTruncated", in: xml) == "true" ? Self.element("NextContinuationToken", in: xml) : nil
        } while token != nil
        return found
    }

    /// Creates the bucket (for tests and first runs against an empty MinIO); an existing one is fine.
    package func createBucket() async throws {
        let (status, body) = try await send(.PUT, path: "/\(settings.bucket)")
        guard (200..<300).contains(status) || status == 409 else { throw failure("create bucket", status, body) }
    }

    // The listing's XML has a fixed, flat shape: its few elements are read by name.
    package static func element(_ name: String, in xml: String) -> String? {
        guard let start = xml.range(of: "<\(name)>"), let end = xml.range(of: "</\(name)>", range: start.upperBound..<xml.endIndex) else { return nil }
        return String(xml[start.upperBound..<end.lowerBound])
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&amp;", with: "&")
    }

    package static func elements(_ name: String, in xml: String) -> [String] {
        var found: [String] = []
        var rest = xml[...]
        while let start = rest.range(of: "<\(name)>"), let end = rest.range(of: "</\(name)>", range: start.upperBound..<rest.endIndex) {
            found.append(String(rest[start.upperBound..<end.lowerBound]))
            rest = rest[end.upperBound...]
        }
        return found
    }
}
