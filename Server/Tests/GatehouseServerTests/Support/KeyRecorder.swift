import Foundation

/// The coding keys a `Decodable` type reads at its top level, found by decoding it from a
/// decoder that answers every request with a placeholder and writes down the key. For the wire
/// types (synthesised or hand-written `Codable` with one `CodingKeys`), the keys read are the
/// keys written, so the OpenAPI test can compare them with a schema's properties.
enum KeyRecorder {
    static func keys<T: Decodable>(of type: T.Type) throws -> Set<String> {
        let log = Log()
        _ = try T(from: RecordingDecoder(log: log, depth: 0))
        return log.keys
    }

    final class Log {
        var keys: Set<String> = []
    }

    struct RecordingDecoder: Decoder {
        let log: Log
        let depth: Int
        var codingPath: [any CodingKey] = []
        var userInfo: [CodingUserInfoKey: Any] = [:]

        func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
            KeyedDecodingContainer(Keyed<Key>(log: log, depth: depth))
        }
        func unkeyedContainer() throws -> any UnkeyedDecodingContainer { Unkeyed() }
        func singleValueContainer() throws -> any SingleValueDecodingContainer { Single(log: log, depth: depth) }
    }

    /// A placeholder of any type: the values a decoder needs to finish.
    static func placeholder<T: Decodable>(_ type: T.Type, log: Log, depth: Int) throws -> T {
        if T.self == String.self { return "x" as! T }
        if T.self == Bool.self { return false as! T }
        if T.self == Int.self { return 0 as! T }
        if T.self == Int64.self { return Int64(0) as! T }
        if T.self == Double.self { return 0.0 as! T }
        if T.self == UUID.self { return UUID() as! T }
        if T.self == Date.self { return Date() as! T }
        if let cases = T.self as? any CaseIterable.Type, let first = (cases.allCases as any Collection).first { return first as! T }
        // A nested type: decoded with a recorder of its own (its keys are not this type's).
        return try T(from: RecordingDecoder(log: Log(), depth: depth + 1))
    }

    struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let log: Log
        let depth: Int
        var codingPath: [any CodingKey] = []
        var allKeys: [Key] { [] }

        func record(_ key: Key) { if depth == 0 { log.keys.insert(key.stringValue) } }
        func contains(_ key: Key) -> Bool { record(key); return true }
        func decodeNil(forKey key: Key) throws -> Bool { record(key); return false }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            record(key)
            return try KeyRecorder.placeholder(type, log: log, depth: depth)
        }
        func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
            record(key)
            return nil
        }
        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
            record(key)
            return KeyedDecodingContainer(Keyed<NestedKey>(log: Log(), depth: depth + 1))
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { record(key); return Unkeyed() }
        func superDecoder() throws -> any Decoder { RecordingDecoder(log: log, depth: depth) }
        func superDecoder(forKey key: Key) throws -> any Decoder { record(key); return RecordingDecoder(log: Log(), depth: depth + 1) }
    }

    /// Every array is empty.
    struct Unkeyed: UnkeyedDecodingContainer {
        var codingPath: [any CodingKey] = []
        var count: Int? { 0 }
        var isAtEnd: Bool { true }
        var currentIndex: Int { 0 }
        mutating func decodeNil() throws -> Bool { true }
        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { throw DecodingError.valueNotFound(T.self, .init(codingPath: [], debugDescription: "empty")) }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
            throw DecodingError.valueNotFound(NestedKey.self, .init(codingPath: [], debugDescription: "empty"))
        }
        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { Unkeyed() }
        mutating func superDecoder() throws -> any Decoder { RecordingDecoder(log: Log(), depth: 1) }
    }

    struct Single: SingleValueDecodingContainer {
        let log: Log
        let depth: Int
        var codingPath: [any CodingKey] = []
        func decodeNil() -> Bool { false }
        func decode<T: Decodable>(_ type: T.Type) throws -> T { try KeyRecorder.placeholder(type, log: log, depth: depth + 1) }
    }
}

/// Runs a Python snippet of the test environment (scripts/test.sh's venv) on some texts written
/// to files, and returns what it printed.
enum PythonCheck {
    struct Failure: Error, CustomStringConvertible { let description: String }

    static func run(_ script: String, files: [String]) async throws -> String {
        try await blocking { try runBlocking(script, files: files) }
    }

    private static func runBlocking(_ script: String, files: [String]) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pycheck-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var paths: [String] = []
        for (index, text) in files.enumerated() {
            let path = directory.appendingPathComponent("\(index)").path
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            paths.append(path)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script] + paths
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let deadline = Date().addingTimeInterval(60)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        guard process.terminationStatus == 0 else { throw Failure(description: "python3 failed (status \(process.terminationStatus))") }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
