#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads JSON Lines from a file descriptor in fixed-size chunks, so memory stays bounded whatever the input size.
///
/// Lines are numbered from 1. A trailing `\r` is dropped so files written on Windows import too.
/// Not Sendable: one reader, one consumer.
public final class JSONLinesReader {
    private let fd: Int32
    private let ownsDescriptor: Bool
    private var buffer: [UInt8]
    private var start = 0
    private var end = 0
    private var eof = false
    public private(set) var lineNumber = 0
    /// Bytes consumed so far, for progress reporting.
    public private(set) var bytesRead: Int64 = 0
    /// The longest line taken (its `\r` aside), or nil for any: a longer one is refused as soon as that many bytes
    /// have come without a newline. Found: `import /dev/zero` grew to GBs, and a 50 MB line was read whole, before
    /// the per-event limit was checked.
    public var maxLineBytes: Int?

    /// Reads standard input.
    public static func standardInput() -> JSONLinesReader { JSONLinesReader(fd: 0, ownsDescriptor: false) }

    /// Opens `path` for reading, or throws naming the path.
    public convenience init(path: String) throws {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else {
            throw LedgerError(.badInput, "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        self.init(fd: fd, ownsDescriptor: true)
    }

    init(fd: Int32, ownsDescriptor: Bool, chunkSize: Int = 1 << 20) {
        self.fd = fd
        self.ownsDescriptor = ownsDescriptor
        self.buffer = [UInt8](repeating: 0, count: chunkSize)
    }

    deinit {
        if ownsDescriptor { close(fd) }
    }

    /// The next line (without its newline), or nil at the end of the input.
    public func next() throws -> ArraySlice<UInt8>? {
        while true {
            if let newline = buffer[start..<end].firstIndex(of: UInt8(ascii: "\n")) {
                lineNumber += 1
                var line = buffer[start..<newline]
                start = newline + 1
                if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
                return line
            }
            if eof {
                guard start < end else { return nil }
                lineNumber += 1
                let line = buffer[start..<end]
                start = end
                return line
            }
            try fill()
        }
    }

    private func fill() throws {
        if start > 0 {
            // Slide the partial line to the front.
            let remaining = end - start
            if remaining > 0 {
                buffer.withUnsafeMutableBufferPointer { raw in
                    let base = raw.baseAddress!
                    (base).update(from: base + start, count: remaining)
                }
            }
            start = 0
            end = remaining
        }
        if let maxLineBytes, end > maxLineBytes + 1 {
            // `end` bytes after the line's start and no newline among them (the `+ 1` is a `\r` before it).
            throw LedgerError(
                .badInput, "the event is more than \(maxLineBytes) bytes, over the limit of \(maxLineBytes)",
                line: lineNumber + 1)
        }
        if end == buffer.count {
            // A single line longer than the buffer: grow it.
            buffer.append(contentsOf: [UInt8](repeating: 0, count: buffer.count))
        }
        let count = buffer.withUnsafeMutableBufferPointer { raw in
            read(fd, raw.baseAddress! + end, raw.count - end)
        }
        if count < 0 {
            throw LedgerError(.badInput, "read failed: \(String(cString: strerror(errno)))")
        }
        if count == 0 { eof = true }
        end += count
        bytesRead += Int64(count)
    }
}

/// One reader, one consumer: the import's decoding thread owns it while an import runs.
@available(*, unavailable)
extension JSONLinesReader: Sendable {}
