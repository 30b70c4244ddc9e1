import ActivityModel
import HTTPTypes
internal import OpenAPIRuntime
import Synchronization

/// A ledger answer (state, timeline, audit, list, feed, resync plan, nightly report, verification, digest, append
/// results) as the HTTP body: the bytes ActivityModel's `JSONWriter` rendered from the ledger's typed result, the
/// same bytes `activity-ledger … --json` prints — key order and number literals as the ledger keeps them.
///
/// The generated OpenAPI layer still parses and validates every request and negotiates the response, but it can
/// only serialize a body through `JSONEncoder`, which would reorder keys and re-format numbers (a content state's
/// `12345678901234567890` or `-0.0`, which `contentHash` covers as sent). So the schemas of these answers map to
/// this type (`openapi-generator-config.yaml`): a handler renders its document once and returns
/// ``rendered(_:)``, and ``RenderedDocumentMiddleware``, around every operation, sends those bytes in place of
/// the placeholder the generated serializer wrote.
package struct RenderedDocument: Codable, Hashable, Sendable {
    /// The bytes of the answer being handled, for ``RenderedDocumentMiddleware``.
    @TaskLocal static var current: Slot?

    /// Where a handler leaves its rendered document.
    final class Slot: Sendable {
        let bytes = Mutex<[UInt8]?>(nil)
    }

    /// Renders `value` for the response being handled and returns the generated layer's placeholder for it.
    static func rendered(_ value: JSONValue) -> RenderedDocument {
        rendered(bytes: value.compactBytes)
    }

    /// The same for a document the ledger wrote itself (`NightlyReport.compactBytes`: an entry at a time, where
    /// the tree of a report took ~1 KB a finding).
    static func rendered(bytes: [UInt8]) -> RenderedDocument {
        current?.bytes.withLock { $0 = bytes }
        return RenderedDocument()
    }

    package init() {}

    /// Only the server is generated; nothing decodes a response.
    package init(from decoder: any Decoder) throws {
        throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "response only"))
    }

    /// The placeholder, replaced before the response leaves (``RenderedDocumentMiddleware``).
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encodeNil()
    }
}

/// Sends the bytes a handler rendered with ``RenderedDocument/rendered(_:)`` as the response body.
struct RenderedDocumentMiddleware: ServerMiddleware {
    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        // `/metrics` answers plain text itself: no slot (and no allocation) for it.
        if operationID == "getMetrics" { return try await next(request, body, metadata) }
        let slot = RenderedDocument.Slot()
        var (response, responseBody) = try await RenderedDocument.$current.withValue(slot) {
            try await next(request, body, metadata)
        }
        if let bytes = slot.bytes.withLock({ $0 }) {
            response.headerFields[.contentLength] = String(bytes.count)
            responseBody = HTTPBody(bytes)
        }
        return (response, responseBody)
    }
}
