internal import Foundation
import Logging

/// Log lines on standard error: `<time> <level> <label>: <metadata> <message>`, like swift-log's
/// `StreamLogHandler`, but metadata is rendered when a line is written, not whenever it changes, and every part
/// of the line has its control characters escaped and API key secrets shortened (``LogText``): one event is
/// exactly one line, whatever a client put in the fields that are logged.
///
/// Hummingbird gives every request's logger its own `hb.request.id`; `StreamLogHandler` re-rendered all of its
/// metadata on each such change, for every request, even when nothing is logged (~5 % of a request's CPU).
public struct LineLogHandler: LogHandler {
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String

    public init(label: String, level: Logger.Level, metadataProvider: Logger.MetadataProvider?) {
        self.label = label
        self.logLevel = level
        self.metadataProvider = metadataProvider
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var bytes = Array(line(event, time: Self.timestamp()).utf8)
        _ = write(2, &bytes, bytes.count)  // one write per line: lines never interleave
    }

    /// The line `log` writes (metadata sorted by key; the event's own over the provider's over the logger's).
    func line(_ event: LogEvent, time: String) -> String {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let extra = event.metadata { merged.merge(extra) { _, new in new } }
        let rendered = merged.sorted { $0.key < $1.key }.map { "\(Self.safe($0.key))=\(Self.safe("\($0.value)"))" }
            .joined(separator: " ")
        let message = Self.safe(event.message.description)
        return "\(time) \(event.level) \(Self.safe(label)):\(rendered.isEmpty ? "" : " " + rendered) \(message)\n"
    }

    /// Log text from anywhere (a client's ids, an error's description) on one line and without secrets.
    private static func safe(_ text: String) -> String {
        LogText.redactingSecrets(LogText.escaped(text))
    }

    private static func timestamp() -> String {
        var now = time(nil)
        var parts = tm()
        localtime_r(&now, &parts)
        var buffer = [Int8](repeating: 0, count: 32)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &parts)
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
