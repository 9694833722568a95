import Foundation
import GatehouseAPI
import NIOCore

// The server's JSON writer: the one way it writes JSON other than `JSONEncoder` (which, with
// `JSONValue` for shapes not known in advance, is the other). Three front-ends over one escaper
// (`JSONString.write`): `JSONObjectWriter` for the answers read most (byte for byte what
// `V1.encoder` writes, a test compares them), `OrderedJSONEncoder` for the wire formats whose
// member order is part of the contract (Sign To Login's answers, the OpenAPI document), and
// `JSONString.quoted` for the few fixed frames written around JSON made already (a realtime
// event, an event on the bus, a transfer's answer, an SMS gateway's template).

/// The one JSON string escaper: quote, backslash, `\b \t \n \f \r`, the other control
/// characters as `\u00xx`, and (where asked) DEL as `\u007f`, which YAML does not allow raw;
/// everything else as it is (UTF-8, `/` unescaped).
package enum JSONString {
    /// `text` escaped for the inside of a JSON string, without the quotes (DEL escaped).
    package static func escape(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count + 16)
        write(text, escapingDEL: true) { out.append(contentsOf: $0) }
        return String(decoding: out, as: UTF8.self)
    }

    /// `text` as a JSON string literal, quotes included.
    package static func quoted(_ text: String) -> String { "\"" + escape(text) + "\"" }

    /// Hands `emit` the escaped text in runs: the stretches that need no escape as they are, and
    /// each escape. `escapingDEL` false writes DEL raw, as `JSONEncoder` does.
    @inline(__always)
    package static func write(_ text: String, escapingDEL: Bool, _ emit: (UnsafeBufferPointer<UInt8>) -> Void) {
        var text = text
        text.withUTF8 { bytes in
            var start = 0
            for index in 0..<bytes.count {
                let byte = bytes[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || (escapingDEL && byte == 0x7F) else { continue }
                if start < index { emit(UnsafeBufferPointer(rebasing: bytes[start..<index])) }
                start = index + 1
                let escape: StaticString? = switch byte {
                case UInt8(ascii: "\""): "\\\""
                case UInt8(ascii: "\\"): "\\\\"
                case 0x08: "\\b"
                case 0x09: "\\t"
                case 0x0A: "\\n"
                case 0x0C: "\\f"
                case 0x0D: "\\r"
                default: nil
                }
                if let escape {
                    escape.withUTF8Buffer(emit)
                } else {
                    let hex: StaticString = "0123456789abcdef"
                    let unicode: [UInt8] = [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                            hex.utf8Start[Int(byte >> 4)], hex.utf8Start[Int(byte & 0xF)]]
                    unicode.withUnsafeBufferPointer(emit)
                }
            }
            if start < bytes.count { emit(UnsafeBufferPointer(rebasing: bytes[start..<bytes.count])) }
        }
    }
}

/// An answer the server writes without `JSONEncoder`, byte for byte what `V1.encoder` writes
/// (keys sorted, slashes as they are, instants as `WireDates`, UUIDs upper-case). For the
/// answers read most: encoding `Account` was 13% of the time of `GET /v1/me`.
/// `JSONResponse.make` takes these by themselves; a test compares the two writers' bytes.
package protocol JSONWritable: Encodable {
    /// The members, in the order of their keys' bytes (the encoder's `.sortedKeys`).
    func write(to object: inout JSONObjectWriter)
}

extension JSONWritable {
    /// The object's bytes.
    package var jsonBuffer: ByteBuffer {
        var object = JSONObjectWriter()
        write(to: &object)
        return object.finish()
    }
}

/// One JSON object written into a buffer, member by member; absent optionals are left out, as
/// the synthesized `Encodable` does.
package struct JSONObjectWriter {
    private var buffer: ByteBuffer
    private var empty = true
    #if DEBUG
    private var lastKey = ""
    #endif

    package init(capacity: Int = 512) {
        self.init(continuing: ByteBufferAllocator().buffer(capacity: capacity))
    }

    /// An object written on at the end of `buffer` (a member's value: `object(_:_:)`).
    private init(continuing buffer: ByteBuffer) {
        self.buffer = buffer
        self.buffer.writeInteger(UInt8(ascii: "{"))
    }

    private mutating func key(_ name: StaticString) {
        #if DEBUG
        let text = name.description
        assert(empty || Array(lastKey.utf8).lexicographicallyPrecedes(Array(text.utf8)), "keys out of order: \(lastKey), \(text)")
        lastKey = text
        #endif
        if !empty { buffer.writeInteger(UInt8(ascii: ",")) }
        empty = false
        buffer.writeInteger(UInt8(ascii: "\""))
        buffer.writeStaticString(name)
        buffer.writeStaticString("\":")
    }

    package mutating func string(_ name: StaticString, _ value: String?) {
        guard let value else { return }
        key(name)
        writeQuoted(value)
    }

    /// A member whose absence is written `null` (an answer whose clients expect every key).
    package mutating func stringOrNull(_ name: StaticString, _ value: String?) {
        key(name)
        if let value { writeQuoted(value) } else { buffer.writeStaticString("null") }
    }

    package mutating func bool(_ name: StaticString, _ value: Bool) {
        key(name)
        buffer.writeStaticString(value ? "true" : "false")
    }

    /// Upper-case, as `uuidString`, written in place (no string made for it).
    package mutating func uuid(_ name: StaticString, _ value: UUID) {
        key(name)
        let digits: StaticString = "0123456789ABCDEF"
        withUnsafeBytes(of: value.uuid) { raw in
            _ = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: 38) { out in
                out[0] = UInt8(ascii: "\"")
                var at = 1
                for (index, byte) in raw.enumerated() {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        out[at] = UInt8(ascii: "-")
                        at += 1
                    }
                    out[at] = digits.utf8Start[Int(byte >> 4)]
                    out[at + 1] = digits.utf8Start[Int(byte & 0x0F)]
                    at += 2
                }
                out[at] = UInt8(ascii: "\"")
                return at + 1
            }
        }
    }

    package mutating func date(_ name: StaticString, _ value: Date) {
        key(name)
        buffer.writeInteger(UInt8(ascii: "\""))
        buffer.writeString(WireDates.iso8601String(from: value))
        buffer.writeInteger(UInt8(ascii: "\""))
    }

    package mutating func int(_ name: StaticString, _ value: Int64) {
        key(name)
        buffer.writeString(String(value))
    }

    /// A member whose value is JSON written already (by `V1.encoder` or this writer).
    package mutating func json(_ name: StaticString, _ json: some Sequence<UInt8>) {
        key(name)
        buffer.writeBytes(json)
    }

    /// A member whose value is an object this writer writes, in the same buffer.
    package mutating func object(_ name: StaticString, _ value: some JSONWritable) {
        key(name)
        // The buffer moves to the member's writer and back, so that neither copies it.
        var member = JSONObjectWriter(continuing: buffer)
        buffer = ByteBuffer()
        value.write(to: &member)
        buffer = member.finish()
    }

    package mutating func finish() -> ByteBuffer {
        buffer.writeInteger(UInt8(ascii: "}"))
        return buffer
    }

    /// Escaped as `JSONEncoder` escapes (`JSONString.write`, DEL as it is).
    private mutating func writeQuoted(_ text: String) {
        buffer.writeInteger(UInt8(ascii: "\""))
        JSONString.write(text, escapingDEL: false) { buffer.writeBytes($0) }
        buffer.writeInteger(UInt8(ascii: "\""))
    }
}
