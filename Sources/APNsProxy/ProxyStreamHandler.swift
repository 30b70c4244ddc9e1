import ActivityModel
import Foundation
import Ledger
import Logging
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix

/// One push on a caller's HTTP/2 stream, on that connection's event loop from first frame to answer:
/// authenticates the caller's ledger key (from the key cache; a miss is read on NIO's blocking pool), asks
/// ``APNsProxyGate`` whether to forward, collects the body (at most ``APNsProxyGate/maxBodyBytes``), forwards it
/// unchanged but for `x-ledger-key` on the loop's ``UpstreamConnection``, returns APNs' answer unchanged, and hands
/// the exchange to the recorder, which never makes the answer wait.
final class ProxyStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    /// What every stream of the proxy shares.
    struct Shared: Sendable {
        var keys: APIKeyCache
        var recorder: APNsRecorder
        var metrics: APNsProxyMetrics
        var logger: Logger
        /// See ``APNsProxyConfiguration/bodyTimeout``; nil: no limit.
        var bodyTimeout: TimeAmount?
    }

    private enum Phase {
        /// Reading the request; `verdict` once the key is known.
        case reading
        /// Sent upstream; waiting for APNs.
        case forwarded
        /// Answered (and, if the caller was still sending, the rest of its body is dropped).
        case answered
    }

    private let shared: Shared
    private let upstream: UpstreamConnection?
    private var phase = Phase.reading
    private var head: HPACKHeaders?
    private var at = Instant(milliseconds: 0)
    private var body = ByteBuffer()
    private var ended = false
    private var verdict: Result<ForwardPlan, ProxyRefusal>?
    private var dropped = 0
    /// Set once a read ends with the request still incomplete (most pushes arrive whole in one read, and never
    /// start a timer).
    private var bodyDeadline: Scheduled<Void>?
    /// What a caller may still send after an early answer before its stream is reset.
    static let maxDroppedBytes = 1 << 20

    init(shared: Shared, upstream: UpstreamConnection?) {
        self.shared = shared
        self.upstream = upstream
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let block):
            if head == nil {
                at = Ledger.now()
                head = block.headers
                authenticate(block.headers, context: context)
            }
            // A later header block is the request's trailers: nothing APNs reads.
            if block.endStream { end(context: context) }
        case .data(let data):
            guard phase == .reading else {
                // After an early answer the rest of the body is read and dropped, so that the caller gets that
                // answer whole (curl reports a reset stream as a failure); past `maxDroppedBytes` the stream is reset.
                dropped += data.data.readableBytes
                if dropped > Self.maxDroppedBytes { context.close(promise: nil) }
                return
            }
            if case .byteBuffer(var bytes) = data.data {
                guard body.readableBytes + bytes.readableBytes <= APNsProxyGate.maxBodyBytes else {
                    refuse(APNsProxyGate.tooLarge, context: context)
                    return
                }
                body.writeBuffer(&bytes)
            }
            if data.endStream { end(context: context) }
        default:
            break
        }
    }

    private func end(context: ChannelHandlerContext) {
        ended = true
        bodyDeadline?.cancel()
        proceed(context: context)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if head != nil, !ended, phase == .reading, bodyDeadline == nil, let timeout = shared.bodyTimeout {
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            bodyDeadline = context.eventLoop.scheduleTask(in: timeout) {
                let (handler, context) = bound.value
                guard handler.phase == .reading, !handler.ended else { return }
                handler.refuse(
                    ProxyRefusal(
                        408, "RequestTimeout",
                        "the push was not complete \(timeout.nanoseconds / 1_000_000) ms after its headers (--body-timeout)"),
                    context: context)
                context.close(promise: nil)
            }
        }
        context.fireChannelReadComplete()
    }

    func channelInactive(context: ChannelHandlerContext) {
        bodyDeadline?.cancel()
        context.fireChannelInactive()
    }

    /// Decides from the key cache at once; a key not in it is read off the loop, then the push goes on here.
    private func authenticate(_ headers: HPACKHeaders, context: ChannelHandlerContext) {
        guard let secret = APNsProxyGate.secret(in: headers) else {
            verdict = .failure(APNsProxyGate.missingKey)
            return
        }
        if let key = shared.keys.cached(secret) {
            verdict = APNsProxyGate.check(headers, key: key)
            return
        }
        let keys = shared.keys
        NIOThreadPool.singleton.runIfActive(eventLoop: context.eventLoop) { try keys.authenticate(secret) }
            .assumeIsolated().whenComplete { result in
                switch result {
                case .success(let key): self.verdict = APNsProxyGate.check(headers, key: key)
                case .failure: self.verdict = .failure(APNsProxyGate.keysUnavailable)
                }
                self.proceed(context: context)
            }
    }

    /// Answers a refusal as soon as it is known; forwards once the key is known and the body complete.
    private func proceed(context: ChannelHandlerContext) {
        guard phase == .reading, let verdict else { return }
        switch verdict {
        case .failure(let refusal):
            refuse(refusal, context: context)
        case .success(let plan) where ended:
            forward(plan, context: context)
        case .success:
            break
        }
    }

    private func forward(_ plan: ForwardPlan, context: ChannelHandlerContext) {
        phase = .forwarded
        guard let upstream else {
            // Not a loop of the group the connections were made for: cannot happen with the singleton group.
            shared.metrics.upstreamFailed()
            refuse(ProxyRefusal(502, "UpstreamUnavailable", "no upstream connection on this event loop"), context: context)
            return
        }
        let body = self.body
        upstream.send(path: plan.path, headers: plan.forwarded, body: body).assumeIsolated().whenComplete { result in
            switch result {
            case .failure(let error):
                self.shared.metrics.upstreamFailed()
                let message = (error as? APNsProxyError)?.message ?? "\(error)"
                self.refuse(ProxyRefusal(502, "UpstreamUnavailable", "APNs did not answer: \(message)"), context: context)
            case .success(let answer):
                self.record(plan, body: body, answer: answer)
                self.answer(
                    status: answer.status,
                    headers: answer.headers.filter { !APNsProxyGate.notReturned.contains($0.name) },
                    body: answer.body, context: context)
            }
        }
    }

    private func record(_ plan: ForwardPlan, body: ByteBuffer, answer: UpstreamAnswer) {
        // APNs always answers an apns-id; should it not, one is fixed here so that a replayed journal line records
        // the same event ids.
        let apnsID =
            answer.header("apns-id") ?? plan.recorded.first { $0.name == "apns-id" }?.value
            ?? UUID().uuidString.lowercased()
        shared.recorder.submit(
            ProxiedExchange(
                app: plan.app, at: at, token: plan.token, headers: plan.recorded, body: Array(buffer: body),
                status: answer.status, apnsID: apnsID, answerBody: Array(buffer: answer.body)))
    }

    private func refuse(_ refusal: ProxyRefusal, context: ChannelHandlerContext) {
        guard phase != .answered else { return }
        answer(
            status: refusal.status, headers: [("content-type", "application/json")], body: refusal.body, context: context)
    }

    private func answer(
        status: Int, headers: [(name: String, value: String)], body: ByteBuffer, context: ChannelHandlerContext
    ) {
        phase = .answered
        var block = HPACKHeaders()
        block.reserveCapacity(headers.count + 1)
        block.add(name: ":status", value: String(status))
        for header in headers { block.add(name: header.name, value: header.value) }
        let empty = body.readableBytes == 0
        context.write(wrapOutboundOut(.headers(.init(headers: block, endStream: empty))), promise: nil)
        if !empty { context.write(wrapOutboundOut(.data(.init(data: .byteBuffer(body), endStream: true))), promise: nil) }
        context.flush()
        shared.metrics.answered(status: status)
        // One line per push at debug (LOG_LEVEL=debug), as the HTTP API logs its requests; a token by its prefix only.
        shared.logger.debug(
            "APNs push answered",
            metadata: [
                "apns.status": .stringConvertible(status),
                "apns.path": .string(LogSafe.path(head?.first(name: ":path") ?? "")),
            ])
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A protocol error on the stream (NIOHTTP2 resets it); nothing was forwarded unless the push was complete.
        context.close(promise: nil)
    }
}
