import Foundation

/// JSON text of an `Encodable` value with each object's members in the order its `encode(to:)`
/// writes them (Foundation's encoder does not keep the order), `/` unescaped, and numbers in their
/// shortest form. For the wire formats whose member order is part of what clients were written
/// against: Sign To Login's answers, `res` first.
package enum OrderedJSONEncoder {
    package static func encode<T: Encodable>(_ value: T) throws -> String {
        let root = Slot()
        try root.store(value, path: [])
        var out = ""
        root.write(into: &out)
        return out
    }

    /// One value being written: a literal, or an object or array filled in later.
    final class Slot {
        enum Content {
            case literal(String)
            case object(Members)
            case array(Items)
        }
        var content: Content = .literal("null")

        func store<T: Encodable>(_ value: T, path: [any CodingKey]) throws {
            switch value {
            case let text as String: content = .literal(JSONString.quoted(text))
            case let flag as Bool: content = .literal(flag ? "true" : "false")
            case let number as Int: content = .literal(String(number))
            case let number as Int64: content = .literal(String(number))
            case let number as Int32: content = .literal(String(number))
            case let number as UInt: content = .literal(String(number))
            case let number as UInt64: content = .literal(String(number))
            case let number as Double: content = .literal(try OrderedJSONEncoder.number(number, path: path))
            case let number as Float: content = .literal(try OrderedJSONEncoder.number(Double(number), path: path))
            default: try value.encode(to: SlotEncoder(slot: self, codingPath: path))
            }
        }

        func write(into out: inout String) {
            switch content {
            case .literal(let text): out += text
            case .object(let members):
                out += "{"
                for (index, member) in members.list.enumerated() {
                    if index > 0 { out += "," }
                    out += JSONString.quoted(member.0) + ":"
                    member.1.write(into: &out)
                }
                out += "}"
            case .array(let items):
                out += "["
                for (index, item) in items.list.enumerated() {
                    if index > 0 { out += "," }
                    item.write(into: &out)
                }
                out += "]"
            }
        }

        func members() -> Members {
            if case .object(let members) = content { return members }
            let members = Members()
            content = .object(members)
            return members
        }

        func items() -> Items {
            if case .array(let items) = content { return items }
            let items = Items()
            content = .array(items)
            return items
        }
    }

    final class Members {
        var list: [(String, Slot)] = []
        /// The slot of a member (a member written twice keeps its first place and its last value).
        func slot(_ key: String) -> Slot {
            if let existing = list.first(where: { $0.0 == key }) { return existing.1 }
            let slot = Slot()
            list.append((key, slot))
            return slot
        }
    }

    final class Items {
        var list: [Slot] = []
        func append() -> Slot {
            let slot = Slot()
            list.append(slot)
            return slot
        }
    }

    struct SlotEncoder: Encoder {
        let slot: Slot
        var codingPath: [any CodingKey]
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            KeyedEncodingContainer(Keyed<Key>(members: slot.members(), codingPath: codingPath))
        }
        func unkeyedContainer() -> any UnkeyedEncodingContainer { Unkeyed(items: slot.items(), codingPath: codingPath) }
        func singleValueContainer() -> any SingleValueEncodingContainer { Single(slot: slot, codingPath: codingPath) }
    }

    struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let members: Members
        var codingPath: [any CodingKey]
        mutating func encodeNil(forKey key: Key) throws { members.slot(key.stringValue).content = .literal("null") }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            try members.slot(key.stringValue).store(value, path: codingPath + [key])
        }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            KeyedEncodingContainer(Keyed<NestedKey>(members: members.slot(key.stringValue).members(), codingPath: codingPath + [key]))
        }
        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            Unkeyed(items: members.slot(key.stringValue).items(), codingPath: codingPath + [key])
        }
        mutating func superEncoder() -> any Encoder { SlotEncoder(slot: members.slot("super"), codingPath: codingPath) }
        mutating func superEncoder(forKey key: Key) -> any Encoder { SlotEncoder(slot: members.slot(key.stringValue), codingPath: codingPath + [key]) }
    }

    struct Unkeyed: UnkeyedEncodingContainer {
        let items: Items
        var codingPath: [any CodingKey]
        var count: Int { items.list.count }
        mutating func encodeNil() throws { items.append().content = .literal("null") }
        mutating func encode<T: Encodable>(_ value: T) throws { try items.append().store(value, path: codingPath) }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            KeyedEncodingContainer(Keyed<NestedKey>(members: items.append().members(), codingPath: codingPath))
        }
        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { Unkeyed(items: items.append().items(), codingPath: codingPath) }
        mutating func superEncoder() -> any Encoder { SlotEncoder(slot: items.append(), codingPath: codingPath) }
    }

    struct Single: SingleValueEncodingContainer {
        let slot: Slot
        var codingPath: [any CodingKey]
        mutating func encodeNil() throws { slot.content = .literal("null") }
        mutating func encode<T: Encodable>(_ value: T) throws { try slot.store(value, path: codingPath) }
    }

    static func number(_ value: Double, path: [any CodingKey]) throws -> String {
        guard value.isFinite else {
            throw EncodingError.invalidValue(value, .init(codingPath: path, debugDescription: "JSON has no \(value)"))
        }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }
}
