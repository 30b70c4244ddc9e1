import Foundation
import LedgerTesting

#if canImport(Glibc)
import Glibc
#endif

/// A plain blocking TCP connection to a loopback port, for what an HTTP client library will not do: send half a
/// request head, a body shorter than its Content-Length, a 100k-character path. Use it off the cooperative
/// pool (``offThePool(_:)``).
final class RawConnection: @unchecked Sendable {
    let descriptor: Int32

    /// Connects to 127.0.0.1:`port`; `receiveTimeout` bounds each ``receive()``.
    init(port: Int, receiveTimeout: Duration = .seconds(10)) throws {
        descriptor = try LoopbackSocket.connect(port: port)
        let seconds = receiveTimeout.components.seconds
        var timeout = timeval(tv_sec: Int(seconds), tv_usec: Int(receiveTimeout.components.attoseconds / 1_000_000_000_000))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit {
        close(descriptor)
    }

    /// Sends all of `text`; false when the server closed the connection.
    @discardableResult
    func send(_ text: String) -> Bool {
        var bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeMutableBytes {
                Glibc.send(descriptor, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL))
            }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }

    /// Everything the server sends until it closes the connection (or the receive timeout passes: then
    /// `closed` is false).
    func receiveUntilClosed() -> (text: String, closed: Bool) {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count == 0 { return (String(decoding: received, as: UTF8.self), true) }
            if count < 0 {
                let closed = errno == ECONNRESET
                return (String(decoding: received, as: UTF8.self), closed)
            }
            received += buffer[0..<count]
        }
    }

    /// One response of a connection that stays open: reads until the head and `Content-Length` bytes of body.
    func receiveResponse() -> String? {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let text = String(decoding: received, as: UTF8.self)
            if let end = text.range(of: "\r\n\r\n") {
                let head = text[..<end.lowerBound].lowercased()
                let length = head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
                if text.utf8.count - text[..<end.upperBound].utf8.count >= length { return text }
            }
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return received.isEmpty ? nil : String(decoding: received, as: UTF8.self) }
            received += buffer[0..<count]
        }
    }
}
