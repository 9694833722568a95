import Foundation
import GatehouseAPI
import NIOCore

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
        buffer = ByteBufferAllocator().buffer(capacity: capacity)
        buffer.writeInteger(UInt8(ascii: "{"))
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

    package mutating func bool(_ name: StaticString, _ value: Bool) {
        key(name)
        buffer.writeStaticString(value ? "true" : "false")
    }

    package mutating func uuid(_ name: StaticString, _ value: UUID) {
        key(name)
        buffer.writeInteger(UInt8(ascii: "\""))
        buffer.writeString(value.uuidString)
        buffer.writeInteger(UInt8(ascii: "\""))
    }

    package mutating func date(_ name: StaticString, _ value: Date) {
        key(name)
        buffer.writeInteger(UInt8(ascii: "\""))
        buffer.writeString(WireDates.iso8601String(from: value))
        buffer.writeInteger(UInt8(ascii: "\""))
    }

    package mutating func finish() -> ByteBuffer {
        buffer.writeInteger(UInt8(ascii: "}"))
        return buffer
    }

    /// Escaped as `JSONEncoder` escapes: quote, backslash, `\b \t \n \f \r`, the other control
    /// characters as `\u00xx`; everything else (DEL, `/`, all of Unicode) as it is.
    private mutating func writeQuoted(_ text: String) {
        buffer.writeInteger(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { bytes in
            var start = 0
            for index in 0..<bytes.count {
                let byte = bytes[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                buffer.writeBytes(UnsafeBufferPointer(rebasing: bytes[start..<index]))
                start = index + 1
                switch byte {
                case UInt8(ascii: "\""): buffer.writeStaticString("\\\"")
                case UInt8(ascii: "\\"): buffer.writeStaticString("\\\\")
                case 0x08: buffer.writeStaticString("\\b")
                case 0x09: buffer.writeStaticString("\\t")
                case 0x0A: buffer.writeStaticString("\\n")
                case 0x0C: buffer.writeStaticString("\\f")
                case 0x0D: buffer.writeStaticString("\\r")
                default:
                    let hex: StaticString = "0123456789abcdef"
                    buffer.writeStaticString("\\u00")
                    buffer.writeInteger(hex.utf8Start[Int(byte >> 4)])
                    buffer.writeInteger(hex.utf8Start[Int(byte & 0xF)])
                }
            }
            buffer.writeBytes(UnsafeBufferPointer(rebasing: bytes[start..<bytes.count]))
        }
        buffer.writeInteger(UInt8(ascii: "\""))
    }
}

extension Account: JSONWritable {
    package func write(to object: inout JSONObjectWriter) {
        object.string("avatarUrl", avatarUrl)
        object.string("birthday", birthday)
        object.date("createdAt", createdAt)
        object.string("email", email)
        object.bool("emailConfirmed", emailConfirmed)
        object.string("firstName", firstName)
        object.uuid("id", id)
        object.string("lastName", lastName)
        object.string("locale", locale)
        object.string("middleName", middleName)
        object.string("pendingEmail", pendingEmail)
        object.string("phone", phone)
        object.bool("phoneVerified", phoneVerified)
        object.string("tag", tag)
        object.date("updatedAt", updatedAt)
    }
}
