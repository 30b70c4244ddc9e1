import HummingbirdCore
import Logging
import NIOCore

/// Hummingbird's HTTP/1 channel with the read timeouts of ``RequestTimeoutHandler``: a client that opens
/// connections and sends nothing, half a head or half a body holds them for a bounded time only.
struct TimedHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value

    let base: HTTP1Channel

    init(responder: @escaping HTTPChannelHandler.Responder, idle: Duration, head: Duration, body: Duration) {
        // Hummingbird's own idle timeout stays off: ours also covers heads and bodies that never complete.
        base = HTTP1Channel(
            responder: responder,
            configuration: .init(additionalChannelHandlers: [
                RequestTimeoutHandler(idle: idle, head: head, body: body), MalformedRequestHandler(),
            ])
        )
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        do {
            // Before the decoder; RequestTimeoutHandler (added by `base`, after the decoder) finds it.
            try channel.pipeline.syncOperations.addHandler(ByteArrivalHandler(), position: .first)
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return base.setup(channel: channel, logger: logger)
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

extension HTTPServerBuilder {
    /// HTTP/1 with idle, head and body read timeouts (zero turns one off).
    static func http1(idleTimeout: Duration, headTimeout: Duration, bodyTimeout: Duration) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            TimedHTTP1Channel(responder: responder, idle: idleTimeout, head: headTimeout, body: bodyTimeout)
        }
    }
}
