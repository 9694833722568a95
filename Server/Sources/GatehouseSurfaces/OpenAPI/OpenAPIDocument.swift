import Foundation
import GatehouseFoundation

/// The OpenAPI 3.1 document of every HTTP surface: `Resources/openapi.json`, kept by hand (it
/// states the contract) and checked against the router and the wire types by the tests. Served
/// as written at `/openapi.json`, as YAML at `/openapi.yaml` and as a reference page at `/docs`.
///
/// The file ships in the server's resource bundle (`gatehouse-server_GatehouseSurfaces.resources`, which
/// SwiftPM puts beside the `gatehouse` binary: deploy the two together).
package enum OpenAPIDocument {
    package static let json: String = {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "json"),
              let text = try? String(contentsOf: url, encoding: .utf8)
        else {
            fatalError("openapi.json is missing from the server's resource bundle: deploy gatehouse-server_GatehouseSurfaces.resources beside the binary")
        }
        return text
    }()

    /// The document parsed, keys in their written order.
    package static let value: OrderedJSON = {
        guard let parsed = try? OrderedJSON.parse(json) else { fatalError("Resources/openapi.json is not valid JSON") }
        return parsed
    }()

    package static let yaml: String = value.yaml()
    package static let html: String = APIReferencePage.render(value)
}

/// A JSON value that keeps the order of object keys (Foundation's parser does not), for
/// rendering the document as YAML and HTML in the order it is written.
package indirect enum OrderedJSON: Equatable, Sendable {
    case string(String), number(String), bool(Bool), null
    case array([OrderedJSON])
    case object([(String, OrderedJSON)])

    package static func == (a: OrderedJSON, b: OrderedJSON) -> Bool {
        switch (a, b) {
        case (.string(let x), .string(let y)), (.number(let x), .number(let y)): x == y
        case (.bool(let x), .bool(let y)): x == y
        case (.null, .null): true
        case (.array(let x), .array(let y)): x == y
        case (.object(let x), .object(let y)): x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: false
        }
    }

    package subscript(key: String) -> OrderedJSON? {
        if case .object(let members) = self { return members.first { $0.0 == key }?.1 }
        return nil
    }

    package var string: String? { if case .string(let s) = self { return s }; return nil }
    package var members: [(String, OrderedJSON)] { if case .object(let m) = self { return m }; return [] }
    package var elements: [OrderedJSON] { if case .array(let e) = self { return e }; return [] }

    package struct ParseError: Error {}

    package static func parse(_ text: String) throws -> OrderedJSON {
        var parser = Parser(bytes: Array(text.utf8))
        let value = try parser.value()
        parser.skipSpace()
        guard parser.index == parser.bytes.count else { throw ParseError() }
        return value
    }

    private struct Parser {
        let bytes: [UInt8]
        var index = 0

        mutating func skipSpace() {
            while index < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[index]) { index += 1 }
        }

        mutating func value() throws -> OrderedJSON {
            skipSpace()
            guard index < bytes.count else { throw ParseError() }
            switch bytes[index] {
            case UInt8(ascii: "{"):
                index += 1
                var members: [(String, OrderedJSON)] = []
                skipSpace()
                if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
                while true {
                    skipSpace()
                    guard case .string(let key) = try value() else { throw ParseError() }
                    skipSpace()
                    guard bytes[index] == UInt8(ascii: ":") else { throw ParseError() }
                    index += 1
                    members.append((key, try value()))
                    skipSpace()
                    if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                    guard bytes[index] == UInt8(ascii: "}") else { throw ParseError() }
                    index += 1
                    return .object(members)
                }
            case UInt8(ascii: "["):
                index += 1
                var elements: [OrderedJSON] = []
                skipSpace()
                if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
                while true {
                    elements.append(try value())
                    skipSpace()
                    if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                    guard bytes[index] == UInt8(ascii: "]") else { throw ParseError() }
                    index += 1
                    return .array(elements)
                }
            case UInt8(ascii: "\""):
                // The string's exact JSON spelling, decoded by Foundation (escapes, surrogates).
                let start = index
                index += 1
                while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                    index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
                }
                index += 1
                let literal = Data(bytes[start..<index])
                guard let decoded = try JSONSerialization.jsonObject(with: literal, options: .fragmentsAllowed) as? String else { throw ParseError() }
                return .string(decoded)
            case UInt8(ascii: "t"): index += 4; return .bool(true)
            case UInt8(ascii: "f"): index += 5; return .bool(false)
            case UInt8(ascii: "n"): index += 4; return .null
            default:
                let start = index
                while index < bytes.count, "+-.0123456789eE".utf8.contains(bytes[index]) { index += 1 }
                guard index > start else { throw ParseError() }
                return .number(String(decoding: bytes[start..<index], as: UTF8.self))
            }
        }
    }

    // MARK: YAML

    /// The value as YAML 1.2 (block style; every string double-quoted, so nothing is re-typed).
    package func yaml() -> String {
        var out = ""
        emit(into: &out, indent: 0, inline: false)
        return out
    }

    private func emit(into out: inout String, indent: Int, inline: Bool) {
        let pad = String(repeating: "  ", count: indent)
        switch self {
        case .object(let members) where !members.isEmpty:
            if inline { out += "\n" }
            for (key, value) in members {
                out += pad + JSONString.quoted(key) + ":"
                value.emitValue(into: &out, indent: indent + 1)
            }
        case .array(let elements) where !elements.isEmpty:
            if inline { out += "\n" }
            for element in elements {
                out += pad + "-"
                switch element {
                case .object(let members) where !members.isEmpty:
                    // The first member on the dash's line, the rest aligned under it.
                    var first = true
                    for (key, value) in members {
                        out += (first ? " " : pad + "  ") + JSONString.quoted(key) + ":"
                        value.emitValue(into: &out, indent: indent + 2)
                        first = false
                    }
                default:
                    element.emitValue(into: &out, indent: indent + 1)
                }
            }
        default:
            out += scalar + "\n"
        }
    }

    private func emitValue(into out: inout String, indent: Int) {
        switch self {
        case .object(let m) where !m.isEmpty: emit(into: &out, indent: indent, inline: true)
        case .array(let e) where !e.isEmpty: emit(into: &out, indent: indent, inline: true)
        default: out += " " + scalar + "\n"
        }
    }

    private var scalar: String {
        switch self {
        case .string(let s): JSONString.quoted(s)
        case .number(let n): n
        case .bool(let b): b ? "true" : "false"
        case .null: "null"
        case .object: "{}"
        case .array: "[]"
        }
    }
}
