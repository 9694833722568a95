import Foundation
import NIOCore

/// A `multipart/form-data` reader (RFC 7578) for the text fields of a form: our own, because
/// MultipartKit 4.7.1 traps (crashing the server) on a part header with a byte above 0x7F.
/// Bodies are read whole and bounded before they get here, so a plain scan is enough.
package enum MultipartFormData {
    package struct Malformed: Error {}

    /// One part: its name, its file name (for a file part) and type, and its bytes.
    package struct Part {
        package var name: String
        package var fileName: String?
        package var contentType: String?
        package var body: ArraySlice<UInt8>
    }

    /// The text fields, in order; file parts are skipped. Throws `Malformed` for anything that
    /// is not well-formed multipart with UTF-8 headers and values.
    package static func fields(_ buffer: ByteBuffer, boundary: String) throws -> [(String, String)] {
        try parts(Array(buffer.readableBytesView), boundary: boundary).compactMap { part in
            guard part.fileName == nil else { return nil }
            guard let value = String(validating: part.body, as: UTF8.self) else { throw Malformed() }
            return (part.name, value)
        }
    }

    /// The boundary a `multipart/form-data` `Content-Type` names (quotes removed), or "" when it
    /// names none. The one reading of it for every route that takes multipart bodies.
    package static func boundary(in contentType: String) -> String {
        contentType.split(separator: ";").dropFirst()
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .first { $0.lowercased().hasPrefix("boundary=") }
            .map { String($0.dropFirst("boundary=".count)).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) } ?? ""
    }

    /// Every named part, in order.
    package static func parts(_ bytes: [UInt8], boundary: String) throws -> [Part] {
        let delimiter = Array("--\(boundary)".utf8)
        guard !boundary.isEmpty, boundary.utf8.count <= 200 else { throw Malformed() }
        let positions = occurrences(of: delimiter, in: bytes)
        guard positions.count >= 2 else { throw Malformed() }
        var parts: [Part] = []
        for (index, position) in positions.enumerated().dropLast() {
            var start = position + delimiter.count
            if bytes.starts(with: [0x2D, 0x2D], at: start) { throw Malformed() }   // "--" before the last part
            while start < bytes.count, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }   // transport padding
            guard bytes.starts(with: [0x0D, 0x0A], at: start) else { throw Malformed() }
            start += 2
            // The part ends at the CRLF that belongs to the next delimiter.
            let end = positions[index + 1] - 2
            guard end >= start, bytes.starts(with: [0x0D, 0x0A], at: end) else { throw Malformed() }
            let part = bytes[start..<end]
            let headerEnd: Int
            let bodyStart: Int
            if part.starts(with: [0x0D, 0x0A]) {
                headerEnd = start
                bodyStart = start + 2
            } else {
                guard let blank = occurrences(of: [0x0D, 0x0A, 0x0D, 0x0A], in: bytes, from: start, upTo: end).first else { throw Malformed() }
                headerEnd = blank
                bodyStart = blank + 4
            }
            guard let headers = String(validating: bytes[start..<headerEnd], as: UTF8.self) else { throw Malformed() }
            var name: String?
            var fileName: String?
            var contentType: String?
            for line in headers.split(separator: "\r\n", omittingEmptySubsequences: true) {
                guard let colon = line.firstIndex(of: ":") else { throw Malformed() }
                let header = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
                let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                if header == "content-type" { contentType = value; continue }
                guard header == "content-disposition" else { continue }
                for item in value.split(separator: ";") {
                    let pair = item.trimmingCharacters(in: .whitespaces)
                    let lower = pair.lowercased()
                    if lower.hasPrefix("name=") {
                        name = String(pair.dropFirst(5)).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                    } else if lower.hasPrefix("filename=") {
                        fileName = String(pair.dropFirst(9)).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                    } else if lower.hasPrefix("filename*=") {
                        // RFC 5987: charset'language'percent-encoded
                        let encoded = String(pair.dropFirst(10)).split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false).last.map(String.init) ?? ""
                        fileName = encoded.removingPercentEncoding ?? encoded
                    }
                }
            }
            guard let name else { continue }
            parts.append(Part(name: name, fileName: fileName, contentType: contentType, body: bytes[bodyStart..<end]))
        }
        // The last delimiter closes the body.
        guard let last = positions.last, bytes.starts(with: [0x2D, 0x2D], at: last + delimiter.count) else { throw Malformed() }
        return parts
    }

    private static func occurrences(of needle: [UInt8], in bytes: [UInt8], from start: Int = 0, upTo end: Int? = nil) -> [Int] {
        let limit = (end ?? bytes.count) - needle.count
        guard !needle.isEmpty, limit >= start else { return [] }
        var found: [Int] = []
        var i = start
        while i <= limit {
            if bytes[i] == needle[0], bytes.starts(with: needle, at: i) {
                found.append(i)
                i += needle.count
            } else {
                i += 1
            }
        }
        return found
    }
}

private extension Array where Element == UInt8 {
    func starts(with prefix: [UInt8], at index: Int) -> Bool {
        guard index >= 0, index + prefix.count <= count else { return false }
        for (offset, byte) in prefix.enumerated() where self[index + offset] != byte { return false }
        return true
    }
}
