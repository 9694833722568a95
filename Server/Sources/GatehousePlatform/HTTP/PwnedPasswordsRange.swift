import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore

/// Have I Been Pwned's Pwned Passwords range API, by k-anonymity: only the first five hex characters of the
/// password's SHA-1 leave the server (`GET {base}/range/{prefix}`, with `Add-Padding: true` so the answer's size
/// tells nothing either); the answer lists every breached hash with that prefix as `SUFFIX:COUNT` lines, and the
/// match is made here. docs/security.md, "Common and breached passwords".
package struct PwnedPasswordsRange: Sendable {
    package let baseURL: String
    package let httpClient: HTTPClient
    package let timeout: TimeAmount

    package init(baseURL: String, httpClient: HTTPClient, timeoutSeconds: Int) {
        self.baseURL = baseURL
        self.httpClient = httpClient
        self.timeout = .seconds(Int64(timeoutSeconds))
    }

    /// How many times `password` appears in the breaches the service knows (0: not seen, or a padding row).
    /// Throws when the service cannot be asked or answers something else than a range.
    package func timesSeen(_ password: String) async throws -> Int {
        let hash = Self.sha1Hex(password)
        let (prefix, suffix) = (hash.prefix(5), hash.dropFirst(5))
        var request = HTTPClientRequest(url: "\(baseURL)/range/\(prefix)")
        request.headers.add(name: "Add-Padding", value: "true")
        request.headers.add(name: "User-Agent", value: "gatehouse")
        let response = try await httpClient.execute(request, timeout: timeout)
        guard response.status == .ok else { throw RangeError(reason: "the range API answered \(response.status.code)") }
        let body = try await response.body.collect(upTo: 4 * 1024 * 1024)
        return Self.count(of: String(suffix), in: String(buffer: body))
    }

    /// The count of `suffix` in a range answer; malformed lines are skipped.
    package static func count(of suffix: String, in range: String) -> Int {
        for line in range.split(whereSeparator: \.isNewline) {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces).uppercased() == suffix else { continue }
            return Int(parts[1].trimmingCharacters(in: .whitespaces)) ?? 0
        }
        return 0
    }

    /// The password's SHA-1 as 40 upper-case hex characters (the range API's form).
    package static func sha1Hex(_ password: String) -> String {
        Insecure.SHA1.hash(data: Data(password.utf8)).map { String(format: "%02X", $0) }.joined()
    }

    package struct RangeError: Error, CustomStringConvertible {
        package var reason: String
        package var description: String { reason }
    }
}
