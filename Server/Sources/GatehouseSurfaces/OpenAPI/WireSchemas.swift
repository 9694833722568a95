import Foundation
import GatehouseAPI
import OpenAPIKit

/// The JSON Schemas of the wire types, read from the types themselves: each type is decoded once
/// from a decoder that answers every request with a placeholder and writes down what was asked —
/// which members (in the order read), of which types, required (`decode`) or optional
/// (`decodeIfPresent`, or a member checked with `contains` first), nullable (`decodeNil`).
/// A struct or a string enum becomes a component named after its Swift type and is referenced
/// wherever it is used; strings, numbers, booleans, dates (`date-time`), UUIDs, arrays and
/// dictionaries are written inline. What a member takes beyond its type (a format, lengths, a
/// pattern, bounds) comes from the type's ``DeclaresMemberRules``; descriptions and examples are
/// the document's prose, added on top by ``OpenAPIGenerator``.
package final class WireSchemas {
    /// The component schemas met so far, in the order met.
    package private(set) var components: OrderedDictionary<String, JSONSchema> = [:]
    private var owners: [String: ObjectIdentifier] = [:]
    /// Where the declared rules go in the document (``MemberRule``): a component's members (its
    /// type's ``DeclaresMemberRules``), a form's fields, path and query parameters.
    package private(set) var rules: [RulePlacement] = []

    package init() {}

    /// Adds a component schema that no type declares (a form's).
    package func add(_ name: String, _ schema: JSONSchema) { components[name] = schema }

    /// Puts `rule` on the schema at `path` of the document.
    package func place(_ rule: MemberRule, at path: [RulePlacement.Step]) { rules.append(RulePlacement(path: path, rule: rule)) }

    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    /// The schema of a value of `type` where it is used: a reference to its component for a
    /// struct or an enum (recorded on first use), the schema itself for anything else.
    package func schema(of type: any Decodable.Type, required: Bool = true, nullable: Bool = false) throws -> JSONSchema {
        if let optional = type as? any OptionalWireType.Type { return try schema(of: optional.wrappedType, required: false, nullable: nullable) }
        if let array = type as? any ArrayWireType.Type {
            return .array(required: required, nullable: nullable, items: try schema(of: array.elementType))
        }
        if let map = type as? any DictionaryWireType.Type {
            return .object(required: required, nullable: nullable, additionalProperties: .b(try schema(of: map.valueType)))
        }
        if let primitive = Self.primitive(type, required: required, nullable: nullable) { return primitive }
        let name = try component(type)
        return .reference(.component(named: name), required: required).nullableIfNeeded(nullable)
    }

    /// Records `type` as a component (once) and answers its name.
    @discardableResult
    package func component(_ type: any Decodable.Type) throws -> String {
        let name = Self.name(of: type)
        if let owner = owners[name] {
            guard owner == ObjectIdentifier(type) else { throw Failure(description: "two wire types are named \(name): rename one") }
            return name
        }
        owners[name] = ObjectIdentifier(type)
        components[name] = .string // a placeholder while its members are read (a type may contain itself)
        components[name] = try record(type)
        return name
    }

    /// A type's component name: its name with the types that enclose it, without the module
    /// (`PaymentNote.Kind` is `PaymentNoteKind`).
    package static func name(of type: Any.Type) -> String {
        String(reflecting: type).split(separator: ".").dropFirst().joined()
    }

    static func primitive(_ type: Any.Type, required: Bool, nullable: Bool) -> JSONSchema? {
        switch type {
        case is String.Type: .string(required: required, nullable: nullable)
        case is Bool.Type: .boolean(required: required, nullable: nullable)
        case is Int.Type, is Int64.Type, is Int32.Type, is UInt.Type, is UInt64.Type, is UInt32.Type: .integer(required: required, nullable: nullable)
        case is Double.Type, is Float.Type: .number(required: required, nullable: nullable)
        case is UUID.Type: .string(format: .uuid, required: required, nullable: nullable)
        case is Date.Type: .string(format: .dateTime, required: required, nullable: nullable)
        case is URL.Type: .string(format: .other("uri"), required: required, nullable: nullable)
        default: nil
        }
    }

    /// A component's schema: a string enum's values, or an object's members as its decoder reads them.
    private func record(_ type: any Decodable.Type) throws -> JSONSchema {
        if let values = Self.enumValues(type) { return .string(allowedValues: values.map { AnyCodable($0) }) }
        let recording = Recording(schemas: self)
        let value: any Decodable
        do {
            value = try type.init(from: RecordingDecoder(recording: recording))
        } catch {
            throw Failure(description: "\(type) cannot be read by its schema recorder: \(error)")
        }
        if let single = recording.single { return single }
        // What the type writes: a member written even when empty (as `null`) is always present.
        if let encodable = value as? any Encodable {
            let written = Written()
            try? encodable.encode(to: WritingEncoder(written: written, top: true))
            for key in written.nulls {
                guard let schema = recording.properties[key] else { continue }
                recording.properties[key] = try self.schema(ofMember: key, in: recording, required: true, nullable: true, fallback: schema)
            }
        }
        if let declaring = type as? any DeclaresMemberRules.Type {
            let name = Self.name(of: type)
            for (member, rule) in declaring.memberRules.sorted(by: { $0.key < $1.key }) {
                guard recording.properties[member] != nil else {
                    throw Failure(description: "\(name) declares a rule for \(member), which is not one of its members")
                }
                place(rule, at: [.key("components"), .key("schemas"), .key(name), .key("properties"), .key(member)])
            }
        }
        return .object(properties: recording.properties)
    }

    /// A member's schema again, with what writing it showed.
    private func schema(ofMember key: String, in recording: Recording, required: Bool, nullable: Bool, fallback: JSONSchema) throws -> JSONSchema {
        guard let type = recording.types[key] else { return fallback }
        return try schema(of: type, required: required, nullable: nullable)
    }

    static func enumValues(_ type: Any.Type) -> [String]? {
        guard let cases = type as? any (CaseIterable & RawRepresentable).Type else { return nil }
        func values<E: CaseIterable & RawRepresentable>(_: E.Type) -> [String]? {
            let values = E.allCases.compactMap { $0.rawValue as? String }
            return values.count == E.allCases.count ? values : nil
        }
        return values(cases)
    }

    /// A value of any wire type: what a recording decoder hands back so its type's decoder can finish.
    static func placeholder<T: Decodable>(_ type: T.Type) throws -> T {
        switch type {
        case is String.Type: return "x" as! T
        case is Bool.Type: return false as! T
        case is Int.Type: return 0 as! T
        case is Int64.Type: return Int64(0) as! T
        case is Int32.Type: return Int32(0) as! T
        case is UInt.Type: return UInt(0) as! T
        case is UInt64.Type: return UInt64(0) as! T
        case is UInt32.Type: return UInt32(0) as! T
        case is Double.Type: return 0.0 as! T
        case is Float.Type: return Float(0) as! T
        case is UUID.Type: return UUID() as! T
        case is Date.Type: return Date() as! T
        case is URL.Type: return URL(string: "https://example.com")! as! T
        default: break
        }
        if let empty = type as? any EmptyWireValue.Type { return empty.emptyValue as! T }
        if let cases = type as? any CaseIterable.Type, let first = (cases.allCases as any Collection).first { return first as! T }
        return try T(from: PlaceholderDecoder())
    }

    // MARK: Recording

    final class Recording {
        let schemas: WireSchemas
        var properties: OrderedDictionary<String, JSONSchema> = [:]
        var optional: Set<String> = []
        var nullable: Set<String> = []
        var single: JSONSchema?
        init(schemas: WireSchemas) { self.schemas = schemas }

        var types: [String: any Decodable.Type] = [:]

        func member(_ key: String, _ type: any Decodable.Type, required: Bool) throws {
            types[key] = type
            try properties[key] = schemas.schema(of: type, required: required && !optional.contains(key), nullable: nullable.contains(key))
        }
    }

    struct RecordingDecoder: Decoder {
        let recording: Recording
        var codingPath: [any CodingKey] = []
        var userInfo: [CodingUserInfoKey: Any] = [:]
        func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
            KeyedDecodingContainer(RecordingKeyed<Key>(recording: recording))
        }
        func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
            throw Failure(description: "a wire type read as a bare array: wrap it in an object")
        }
        func singleValueContainer() throws -> any SingleValueDecodingContainer { RecordingSingle(recording: recording) }
    }

    struct RecordingKeyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let recording: Recording
        var codingPath: [any CodingKey] = []
        var allKeys: [Key] { [] }
        func contains(_ key: Key) -> Bool {
            recording.optional.insert(key.stringValue)
            return true
        }
        func decodeNil(forKey key: Key) throws -> Bool {
            recording.nullable.insert(key.stringValue)
            return false
        }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            try recording.member(key.stringValue, type, required: true)
            return try WireSchemas.placeholder(type)
        }
        func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
            try recording.member(key.stringValue, type, required: false)
            return nil
        }
        // The library's own `decodeIfPresent` of these types asks `contains` and `decodeNil`
        // first, which would read as a member that takes `null`: an absent member is not one.
        func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try absent(type, key) }
        func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try absent(type, key) }
        func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try absent(type, key) }
        func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try absent(type, key) }
        func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try absent(type, key) }
        func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try absent(type, key) }
        func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try absent(type, key) }
        func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try absent(type, key) }
        func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try absent(type, key) }
        func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try absent(type, key) }
        private func absent<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T? {
            try recording.member(key.stringValue, type, required: false)
            return nil
        }
        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
            throw Failure(description: "\(key.stringValue): a nested container has no type to name; decode a type of its own")
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            throw Failure(description: "\(key.stringValue): a nested array has no type to name; decode an array of a type")
        }
        func superDecoder() throws -> any Decoder { throw Failure(description: "superDecoder is not used by wire types") }
        func superDecoder(forKey key: Key) throws -> any Decoder { throw Failure(description: "superDecoder is not used by wire types") }
    }

    /// A type that reads itself as one value (a date, a string wrapper): its schema is that value's.
    struct RecordingSingle: SingleValueDecodingContainer {
        let recording: Recording
        var codingPath: [any CodingKey] = []
        func decodeNil() -> Bool { false }
        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            recording.single = try recording.schemas.schema(of: type)
            return try WireSchemas.placeholder(type)
        }
    }

    /// Decodes any wire type from placeholders, recording nothing (the value of a member whose
    /// type is recorded on its own).
    struct PlaceholderDecoder: Decoder {
        var codingPath: [any CodingKey] = []
        var userInfo: [CodingUserInfoKey: Any] = [:]
        func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> { KeyedDecodingContainer(PlaceholderKeyed<Key>()) }
        func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw Failure(description: "no placeholder for a bare array") }
        func singleValueContainer() throws -> any SingleValueDecodingContainer { PlaceholderSingle() }
    }

    struct PlaceholderKeyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        var codingPath: [any CodingKey] = []
        var allKeys: [Key] { [] }
        func contains(_ key: Key) -> Bool { false }
        func decodeNil(forKey key: Key) throws -> Bool { true }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try WireSchemas.placeholder(type) }
        func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? { nil }
        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
            KeyedDecodingContainer(PlaceholderKeyed<NestedKey>())
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { throw Failure(description: "no placeholder for a bare array") }
        func superDecoder() throws -> any Decoder { PlaceholderDecoder() }
        func superDecoder(forKey key: Key) throws -> any Decoder { PlaceholderDecoder() }
    }

    struct PlaceholderSingle: SingleValueDecodingContainer {
        var codingPath: [any CodingKey] = []
        func decodeNil() -> Bool { false }
        func decode<T: Decodable>(_ type: T.Type) throws -> T { try WireSchemas.placeholder(type) }
    }
}

// MARK: Writing

extension WireSchemas {
    /// The members a value writes as `null`.
    final class Written {
        var nulls: [String] = []
    }

    /// An encoder that writes nothing and notes, at the top level, the members written as `null`.
    struct WritingEncoder: Encoder {
        let written: Written
        let top: Bool
        var nullWritten: (() -> Void)?
        var codingPath: [any CodingKey] = []
        var userInfo: [CodingUserInfoKey: Any] = [:]

        init(written: Written, top: Bool, nullWritten: (() -> Void)? = nil) {
            self.written = written
            self.top = top
            self.nullWritten = nullWritten
        }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            KeyedEncodingContainer(WritingKeyed<Key>(written: written, top: top))
        }
        func unkeyedContainer() -> any UnkeyedEncodingContainer { WritingUnkeyed(written: written) }
        func singleValueContainer() -> any SingleValueEncodingContainer { WritingSingle(nullWritten: nullWritten) }
    }

    struct WritingKeyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let written: Written
        let top: Bool
        var codingPath: [any CodingKey] = []
        mutating func encodeNil(forKey key: Key) throws { if top { written.nulls.append(key.stringValue) } }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            let written = self.written, top = self.top
            try value.encode(to: WritingEncoder(written: Written(), top: false, nullWritten: { if top { written.nulls.append(key.stringValue) } }))
        }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            KeyedEncodingContainer(WritingKeyed<NestedKey>(written: Written(), top: false))
        }
        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer { WritingUnkeyed(written: Written()) }
        mutating func superEncoder() -> any Encoder { WritingEncoder(written: Written(), top: false) }
        mutating func superEncoder(forKey key: Key) -> any Encoder { WritingEncoder(written: Written(), top: false) }
    }

    struct WritingUnkeyed: UnkeyedEncodingContainer {
        let written: Written
        var codingPath: [any CodingKey] = []
        var count = 0
        mutating func encodeNil() throws { count += 1 }
        mutating func encode<T: Encodable>(_ value: T) throws { count += 1 }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            KeyedEncodingContainer(WritingKeyed<NestedKey>(written: Written(), top: false))
        }
        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { WritingUnkeyed(written: Written()) }
        mutating func superEncoder() -> any Encoder { WritingEncoder(written: Written(), top: false) }
    }

    struct WritingSingle: SingleValueEncodingContainer {
        let nullWritten: (() -> Void)?
        var codingPath: [any CodingKey] = []
        mutating func encodeNil() throws { nullWritten?() }
        mutating func encode<T: Encodable>(_ value: T) throws {}
    }
}

extension JSONSchema {
    fileprivate func nullableIfNeeded(_ nullable: Bool) -> JSONSchema {
        nullable ? .any(of: self, .null(), required: required) : self
    }
}

// MARK: The containers a recorder looks inside

/// `Optional<Wrapped>`: the schema of `Wrapped`, not required.
package protocol OptionalWireType { static var wrappedType: any Decodable.Type { get } }
extension Optional: OptionalWireType where Wrapped: Decodable {
    package static var wrappedType: any Decodable.Type { Wrapped.self }
}

/// `[Element]`: an array of `Element`'s schema.
package protocol ArrayWireType { static var elementType: any Decodable.Type { get } }
extension Array: ArrayWireType where Element: Decodable {
    package static var elementType: any Decodable.Type { Element.self }
}

/// `[String: Value]`: an object whose members are all `Value`'s schema.
package protocol DictionaryWireType { static var valueType: any Decodable.Type { get } }
extension Dictionary: DictionaryWireType where Key == String, Value: Decodable {
    package static var valueType: any Decodable.Type { Value.self }
}

/// A type whose placeholder is its empty value.
protocol EmptyWireValue { static var emptyValue: Self { get } }
extension Array: EmptyWireValue { static var emptyValue: Self { [] } }
extension Dictionary: EmptyWireValue { static var emptyValue: Self { [:] } }
extension Optional: EmptyWireValue { static var emptyValue: Self { nil } }
