import Foundation
import Logging

/// How the server writes its log lines (`GATEHOUSE_LOG_FORMAT`).
public enum LogFormat: String, Sendable, CaseIterable {
    /// swift-log's line: `2026-11-29T10:00:00+0000 info gatehouse: request.id=… [GatehouseSurfaces] POST /v1/sessions 201 3.1ms`.
    case text
    /// One JSON object per line, for a log pipeline (Loki, Elasticsearch, CloudWatch): `time` (ISO 8601, UTC, with
    /// milliseconds), `level`, `label`, `source`, `message`, and the metadata's keys as they are (`request.id`…).
    case json
}

/// The server's log lines: `StreamLogHandler`'s, to standard error, with the logger's metadata
/// kept as a dictionary and formatted only when a line is written. `StreamLogHandler` formats
/// all of it again on every change: 4% of a cheap request's time, for lines that at the default
/// level are never written.
///
/// A request's id is written `request.id`: Hummingbird puts its own under `hb.request.id` in every
/// request's logger, and the server's edge (`EdgeMiddleware`) replaces it there with the client's
/// `X-Request-Id` when it sent one, so that the common request touches no metadata at all.
package struct GatehouseLogHandler: LogHandler {
    private var stream: StreamLogHandler
    private let label: String
    private let format: LogFormat
    package var metadata: Logger.Metadata = [:]

    package init(label: String, format: LogFormat = .text) {
        stream = StreamLogHandler.standardError(label: label)
        self.label = label
        self.format = format
    }

    package var logLevel: Logger.Level {
        get { stream.logLevel }
        set { stream.logLevel = newValue }
    }

    package var metadataProvider: Logger.MetadataProvider? {
        get { stream.metadataProvider }
        set { stream.metadataProvider = newValue }
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// The line `StreamLogHandler` would write with this metadata as its own: the event's
    /// metadata wins over the logger's, as it does there.
    package func log(event: LogEvent) {
        var event = event
        if !metadata.isEmpty {
            var own = metadata
            if let id = own.removeValue(forKey: Self.hummingbirdRequestID), own[Self.requestID] == nil { own[Self.requestID] = id }
            event.metadata = own.merging(event.metadata ?? [:]) { _, explicit in explicit }
        }
        guard format == .json else { return stream.log(event: event) }
        if let provided = stream.metadataProvider?.get(), !provided.isEmpty {
            event.metadata = provided.merging(event.metadata ?? [:]) { _, explicit in explicit }
        }
        var line: [String: JSONValue] = [
            "time": .string(Self.time()),
            "level": .string(event.level.rawValue),
            "label": .string(label),
            "source": .string(event.source),
            "message": .string("\(event.message)"),
        ]
        for (key, value) in event.metadata ?? [:] where line[key] == nil { line[key] = Self.json(value) }
        guard var data = try? JSONValue.object(line).sortedJSON(escapingSlashes: false) else { return }
        data.append(0x0A)
        // One write per line: lines of concurrent requests never interleave.
        FileHandle.standardError.write(data)
    }

    private static let hummingbirdRequestID = "hb.request.id"
    private static let requestID = "request.id"

    private static func json(_ value: Logger.MetadataValue) -> JSONValue {
        switch value {
        case .string(let text): .string(text)
        case .stringConvertible(let convertible): .string("\(convertible)")
        case .array(let values): .array(values.map(json))
        case .dictionary(let values): .object(values.mapValues(json))
        }
    }

    private static func time() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
                      Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), Int(now.tv_nsec / 1_000_000))
    }
}
