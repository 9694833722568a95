import Foundation
import GatehouseFoundation
#if canImport(Glibc)
import Glibc
#endif

/// Where a webhook may go (docs/webhooks.md, "Threat model"): an `https` URL (plain `http` only where
/// `GATEHOUSE_WEBHOOK_ALLOW_HTTP` says, development's default), no user name or password in it, at most 2,048
/// characters, whose host resolves only to public addresses — never loopback, private, link-local (the cloud's
/// metadata service), carrier-grade NAT, multicast or reserved ones — unless `GATEHOUSE_WEBHOOK_ALLOW_PRIVATE_ADDRESSES`.
/// Checked when the endpoint is added and again before every attempt, since a name can be pointed elsewhere later.
package struct WebhookAddress: Sendable {
    package let settings: GatehouseConfiguration.Webhooks

    package init(settings: GatehouseConfiguration.Webhooks) {
        self.settings = settings
    }

    /// The URL as kept, or `invalid_parameter` naming what is wrong.
    package func check(_ text: String) async throws -> String {
        let text = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.count <= 2_048, !InputText.hasNUL(text), let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
              let host = components.host, !host.isEmpty else {
            throw WebhookEndpoints.invalid("url is not an absolute URL", field: "url")
        }
        guard scheme == "https" || (scheme == "http" && settings.allowHTTP) else {
            throw WebhookEndpoints.invalid(settings.allowHTTP ? "url is http or https" : "url is https (plain http is for development)", field: "url")
        }
        guard components.user == nil, components.password == nil else { throw WebhookEndpoints.invalid("url carries no user name or password", field: "url") }
        if let refusal = try await refusal(host: host) { throw WebhookEndpoints.invalid(refusal, field: "url") }
        return text
    }

    /// Why a delivery may not go to this host now, or nil.
    package func refusal(host: String) async throws -> String? {
        guard !settings.allowPrivateAddresses else { return nil }
        let name = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let addresses = await Self.resolve(name)
        guard !addresses.isEmpty else { return "url's host \(name.prefix(100)) does not resolve" }
        if let bad = addresses.first(where: { !Self.isPublic($0) }) {
            return "url's host \(name.prefix(100)) resolves to \(Self.text(bad)), which is not a public address"
        }
        return nil
    }

    /// An address as its bytes: 4 for IPv4, 16 for IPv6.
    package static func resolve(_ host: String) async -> [[UInt8]] {
        if let literal = literal(host) { return [literal] }
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var hints = addrinfo()
                hints.ai_family = AF_UNSPEC
                #if os(Linux)
                hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
                #else
                hints.ai_socktype = SOCK_STREAM
                #endif
                var result: UnsafeMutablePointer<addrinfo>?
                guard getaddrinfo(host, nil, &hints, &result) == 0, let first = result else {
                    continuation.resume(returning: [])
                    return
                }
                defer { freeaddrinfo(first) }
                var found: [[UInt8]] = []
                var cursor: UnsafeMutablePointer<addrinfo>? = first
                while let entry = cursor {
                    if entry.pointee.ai_family == AF_INET, let raw = entry.pointee.ai_addr {
                        raw.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                            let value = address.pointee.sin_addr.s_addr
                            found.append(withUnsafeBytes(of: value) { Array($0) })
                        }
                    } else if entry.pointee.ai_family == AF_INET6, let raw = entry.pointee.ai_addr {
                        raw.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                            found.append(withUnsafeBytes(of: address.pointee.sin6_addr) { Array($0) })
                        }
                    }
                    cursor = entry.pointee.ai_next
                }
                continuation.resume(returning: found)
            }
        }
    }

    /// An address written as one (`10.0.0.1`, `::1`), as its bytes; nil for a name.
    package static func literal(_ host: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return withUnsafeBytes(of: v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, host, &v6) == 1 { return withUnsafeBytes(of: v6) { Array($0) } }
        return nil
    }

    /// Whether the address is one anybody on the internet reaches (RFC 6890's special-purpose registries left out).
    package static func isPublic(_ bytes: [UInt8]) -> Bool {
        if bytes.count == 4 {
            let (a, b, c) = (bytes[0], bytes[1], bytes[2])
            switch a {
            case 0, 10, 127: return false                       // "this network", private, loopback
            case 100 where (64...127).contains(b): return false  // carrier-grade NAT
            case 169 where b == 254: return false                // link-local: cloud metadata services
            case 172 where (16...31).contains(b): return false   // private
            case 192 where b == 168: return false                // private
            case 192 where b == 0 && (c == 0 || c == 2): return false  // IETF protocol assignments, documentation
            case 198 where b == 18 || b == 19: return false      // benchmarking
            case 198 where b == 51 && c == 100, 203 where b == 0 && c == 113: return false  // documentation
            case 224...255: return false                         // multicast, reserved, broadcast
            default: return true
            }
        }
        guard bytes.count == 16 else { return false }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF { return isPublic(Array(bytes[12..<16])) }  // IPv4-mapped
        if bytes[0..<12].allSatisfy({ $0 == 0 }) { return false }  // ::, ::1 and the old IPv4-compatible form
        if bytes[0] == 0x00 && bytes[1] == 0x64 && bytes[2] == 0xFF && bytes[3] == 0x9B { return isPublic(Array(bytes[12..<16])) }  // NAT64
        if bytes[0] & 0xFE == 0xFC { return false }                 // unique local
        if bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80 { return false }  // link-local
        if bytes[0] == 0xFF { return false }                        // multicast
        if bytes[0] == 0x20 && bytes[1] == 0x01 && bytes[2] == 0x0D && bytes[3] == 0xB8 { return false }  // documentation
        if bytes[0] == 0x20 && bytes[1] == 0x02 { return isPublic(Array(bytes[2..<6])) }  // 6to4
        return true
    }

    static func text(_ bytes: [UInt8]) -> String {
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        return stride(from: 0, to: bytes.count, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }.joined(separator: ":")
    }
}
