import Foundation
import LedgerStore
import Logging
import NIOCore
import PostgresNIO

/// What the Ledger target's PostgreSQL code (`PostgresSnapshot`, `PostgresProjectionRows`) shares with the event
/// log: the event columns and their decoding, errors as the log names them, the chain check of `verify`, and
/// blocking queries for code that runs on a thread of its own (never an event loop).
extension PostgresEventLog {
    /// `SELECT` of every event column, `FROM events` (append `WHERE …`): the columns ``recordedEvent(_:)`` reads.
    package static var selectColumns: String { columns }

    /// A row of ``selectColumns``.
    package static func recordedEvent(_ row: PostgresRow) throws -> RecordedEvent {
        let (position, stream, version, id, type, at, recordedAt, payload, hash) = try row.decode(
            (Int64, String, Int64, String, String, Int64, Int64, ByteBuffer, ByteBuffer).self)
        return RecordedEvent(
            position: position, stream: stream, version: version, id: id, type: type, at: at, recordedAt: recordedAt,
            payload: Array(buffer: payload), hash: Array(buffer: hash))
    }

    /// `error` as the log reports it: a PostgreSQL failure becomes one storage error naming the database
    /// (`location`, never its password); store errors and cancellation pass unchanged.
    package static func storageError(_ error: any Error, location: String) -> any Error {
        switch error {
        case let error as StoreError: return error
        case is CancellationError: return error
        case let error as PSQLError: return StoreError(.storage, "\(location): \(describe(error))")
        default: return StoreError(.storage, "\(location): \(error)")
        }
    }
}

/// `verify` of a log on PostgreSQL, apart from its reading: pages of rows in position order, each checked against
/// the chain (`ChainChecker`, as the SQLite file's), then the report, with the head's own check. One home for the
/// log's `verify(upTo:)` (async, on the pool) and a snapshot's (blocking, inside its transaction):
///
///     var scan = PostgresChainScan(head: head, newest: newest, namespacedFrom: from, digest: digest)
///     while let page = scan.nextPage {
///         guard scan.check(try read(after: page.after, limit: page.limit)) else { break }
///     }
///     return scan.report()
package struct PostgresChainScan: Sendable {
    /// Rows per page.
    package static let pageSize: Int64 = 10_000
    /// The statement that gives `newest`.
    package static let newestSQL = "SELECT coalesce(max(position), 0) FROM events"

    package let head: Digest
    package let namespacedFrom: Int64
    package let digest: Digest?
    /// The last position of the log: the head's, or a later row's (rows past the head were added by hand).
    package let last: Int64
    /// The last position to check: the log's (a digest is proven along the way).
    package let limit: Int64
    private var checker: ChainChecker
    private var after: Int64 = 0
    private var done = false

    /// `head` is `log_head`'s row, `newest` the highest position in `events` (`newestSQL`).
    package init(head: Digest, newest: Int64, namespacedFrom: Int64, digest: Digest?) {
        self.head = head
        self.namespacedFrom = namespacedFrom
        self.digest = digest
        last = max(head.position, newest)
        limit = last
        checker = ChainChecker(digest: digest)
    }

    /// Rows checked so far.
    package var checked: Int64 { checker.checked }

    /// The next page to read: the rows after `after`, in position order, at most `limit` of them; nil once the scan
    /// is over.
    package var nextPage: (after: Int64, limit: Int)? {
        guard !done, after < limit else { return nil }
        return (after, Int(min(Self.pageSize, limit - after)))
    }

    /// Checks a page read as ``nextPage`` said; false when the scan is over (an empty page, or a row that breaks
    /// the chain).
    package mutating func check(_ page: [RecordedEvent]) -> Bool {
        guard let lastRow = page.last else {
            done = true
            return false
        }
        for event in page {
            guard checker.check(event, prefix: ChainHasher.prefix(event, namespacedFrom: namespacedFrom)) else {
                done = true
                return false
            }
        }
        after = lastRow.position
        return true
    }

    /// The report: `ChainChecker.finish`, and the head must name the chain's end (a head that disagrees with the
    /// rows was changed by hand).
    package func report() -> VerifyReport {
        var report = checker.finish(limit: limit, last: last, digest: digest)
        if report.ok, report.lastGood != head {
            report.ok = false
            report.firstBadPosition = head.position
            report.reason = "log_head names position \(head.position) with a hash the chain does not reach"
        }
        return report
    }
}

extension PostgresConnection {
    /// Runs `sql` (numbered placeholders, `bindings` for them) and returns every row, blocking the calling thread
    /// until the server answered. Only for a thread of its own (a `NIOThreadPool`'s): on an event loop it would wait
    /// for itself. PostgreSQL's errors are thrown as they come (`PostgresEventLog.storageError` names them).
    package func rows(_ sql: String, _ bindings: PostgresBindings = PostgresBindings(), logger: Logger) throws
        -> [PostgresRow]
    {
        precondition(!eventLoop.inEventLoop, "a blocking PostgreSQL query on the connection's event loop")
        return try query(PostgresQuery(unsafeSQL: sql, binds: bindings), logger: logger).wait().rows
    }
}

/// The start of PostgreSQL's binary one-dimensional array, before its elements: the dimensions (0 when empty), a
/// has-NULLs flag, the element type, then for the one dimension its length and lower bound (1).
package enum PostgresArrayHeader {
    @inlinable
    package static func write(count: Int, hasNulls: Bool, of type: PostgresDataType, into buffer: inout ByteBuffer) {
        buffer.writeInteger(count == 0 ? 0 : 1, as: Int32.self)
        buffer.writeInteger(hasNulls ? 1 : 0, as: Int32.self)
        buffer.writeInteger(type.rawValue)
        guard count > 0 else { return }
        buffer.writeInteger(Int32(count), as: Int32.self)
        buffer.writeInteger(1, as: Int32.self)
    }
}

/// Byte strings bound as one PostgreSQL `bytea[]`, written straight from their arrays: the payload and hash columns
/// of an append's `unnest` write (a `ByteBuffer` per element was an allocation and a copy each).
package struct PostgresByteaArray: PostgresNonThrowingEncodable, Sendable {
    package var elements: [[UInt8]]

    package init(_ elements: [[UInt8]]) { self.elements = elements }

    package static var psqlType: PostgresDataType { .byteaArray }
    package static var psqlFormat: PostgresFormat { .binary }

    /// ``PostgresArrayHeader``, then each element as its length and bytes.
    package func encode<JSONEncoder: PostgresJSONEncoder>(
        into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>
    ) {
        PostgresArrayHeader.write(count: elements.count, hasNulls: false, of: .bytea, into: &buffer)
        buffer.reserveCapacity(minimumWritableBytes: elements.reduce(0) { $0 + 4 + $1.count })
        for element in elements {
            buffer.writeInteger(Int32(element.count), as: Int32.self)
            buffer.writeBytes(element)
        }
    }
}

/// An array bound as one PostgreSQL array whose elements may be NULL (`[T]` itself has no NULL elements): the
/// columns of a multi-row `unnest` write that has nullable columns.
package struct PostgresNullableArray<Element: PostgresArrayEncodable & Sendable>: PostgresEncodable, Sendable {
    package var elements: [Element?]

    package init(_ elements: [Element?]) { self.elements = elements }

    package static var psqlType: PostgresDataType { Element.psqlArrayType }
    package static var psqlFormat: PostgresFormat { .binary }

    /// ``PostgresArrayHeader``, then each element as its length and bytes (-1 and none: NULL). Inlinable, so a
    /// caller in another module gets it specialized for its element type (the projection's 29 columns of an append:
    /// a generic call per element otherwise).
    @inlinable
    package func encode<JSONEncoder: PostgresJSONEncoder>(
        into buffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>
    ) throws {
        PostgresArrayHeader.write(
            count: elements.count, hasNulls: elements.contains { $0 == nil }, of: Element.psqlType, into: &buffer)
        for element in elements {
            guard let element else {
                buffer.writeInteger(-1, as: Int32.self)
                continue
            }
            let lengthIndex = buffer.writerIndex
            buffer.writeInteger(0, as: Int32.self)
            let start = buffer.writerIndex
            try element.encode(into: &buffer, context: context)
            buffer.setInteger(Int32(buffer.writerIndex - start), at: lengthIndex, as: Int32.self)
        }
    }
}

/// Text as PostgreSQL stores it for the ledger. PostgreSQL's `text` cannot hold U+0000, which an attributes type may
/// (it is free text, stored exactly as sent: `UnicodeRoundTripTests`) and a query parameter may (`?installation=a%00b`).
/// U+0000 is written as U+0001 U+0001 and U+0001 as U+0001 U+0002; every other scalar as itself. The mapping is one
/// to one and keeps byte order (a range or a prefix bound splits the stored texts where it did), and it is the
/// identity on every name, which holds no control character (`Identifier`): only the projection's `attributes_type`
/// and parameters that could not match a name change.
package enum PostgresText {
    package static func escape(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0.value <= 1 }) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0: out.append(contentsOf: ["\u{1}", "\u{1}"])
            case 1: out.append(contentsOf: ["\u{1}", "\u{2}"])
            default: out.append(scalar)
            }
        }
        return String(out)
    }

    package static func unescape(_ text: String) -> String {
        guard text.unicodeScalars.contains("\u{1}") else { return text }
        var out = String.UnicodeScalarView()
        var escaped = false
        for scalar in text.unicodeScalars {
            if escaped {
                out.append(scalar == "\u{1}" ? "\u{0}" : "\u{1}")
                escaped = false
            } else if scalar == "\u{1}" {
                escaped = true
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }
}
