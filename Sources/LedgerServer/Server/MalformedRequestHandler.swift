import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// Gives Hummingbird's answer to a request the HTTP parser refused (a 100k-character path, a broken request
/// line) the API's `{"error":…}` body: Hummingbird writes a bare `400` with an empty body and closes.
final class MalformedRequestHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// The error of the parser, once it failed; the next response is the one that reports it.
    private var parserError: HTTPParserError?
    private var body: ByteBuffer?

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let error = error as? HTTPParserError { parserError = error }
        context.fireErrorCaught(error)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard let parserError else {
            context.write(data, promise: promise)
            return
        }
        switch unwrapOutboundIn(data) {
        case .head(var response)
        where response.status == .badRequest && response.headerFields[.contentLength] == "0" && body == nil:
            let document = ByteBuffer(bytes: Self.error(parserError).body())
            response.headerFields[.contentType] = "application/json; charset=utf-8"
            response.headerFields[.contentLength] = String(document.readableBytes)
            body = document
            context.write(wrapOutboundOut(.head(response)), promise: promise)
        case .end(let trailers) where body != nil:
            context.write(wrapOutboundOut(.body(body!)), promise: nil)
            context.write(wrapOutboundOut(.end(trailers)), promise: promise)
            self.parserError = nil
            body = nil
        default:
            context.write(data, promise: promise)
        }
    }

    /// The client-facing error for a request the parser refused (also when a route was reading its body).
    static func error(_ error: HTTPParserError) -> APIError {
        switch error {
        case .headerOverflow:
            return .badRequest("the request line and headers are too large (80 KiB at most; a path that long?)")
        case .invalidURL:
            return .badRequest("the request target (path and query) is not a valid URL")
        default:
            return .badRequest("malformed HTTP request (\(error))")
        }
    }
}
