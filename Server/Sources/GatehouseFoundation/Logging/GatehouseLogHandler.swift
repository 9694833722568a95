import Logging

/// The server's log lines: `StreamLogHandler`'s, to standard error, with the logger's metadata
/// kept as a dictionary and formatted only when a line is written. `StreamLogHandler` formats
/// all of it again on every change, and every request sets its id twice (Hummingbird's and
/// ours): 4% of a cheap request's time, for lines that at the default level are never written.
package struct GatehouseLogHandler: LogHandler {
    private var stream: StreamLogHandler
    package var metadata: Logger.Metadata = [:]

    package init(label: String) {
        stream = StreamLogHandler.standardError(label: label)
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
            event.metadata = metadata.merging(event.metadata ?? [:]) { _, explicit in explicit }
        }
        stream.log(event: event)
    }
}
