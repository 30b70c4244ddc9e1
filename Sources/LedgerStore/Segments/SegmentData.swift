import GRDB
import GRDBSQLite

/// A sealed segment's blocks as stored since 003_packed_segments.sql: back to back in one `segment_data` blob,
/// each `segment_blocks` row naming its range. One blob of a few hundred KiB lives in overflow pages, which SQLite
/// fills; a 2–3 KiB block per row left most of a 4 KiB leaf page's tail empty (Schemas/sql/README.md).
///
/// A segment read whole (scans, verify, a segment's hashes) reads the blob once; a point read of one stream's
/// blocks reads only each block's range through SQLite's incremental blob I/O (`Reader`).
enum SegmentData {
    /// The whole blob of the segment starting at `segment`.
    static func whole(_ segment: Int64, db: Database) throws -> [UInt8] {
        let statement = try db.cachedStatement(sql: "SELECT data FROM segment_data WHERE segment = ?")
        statement.bind(segment, at: 1)
        defer { statement.resetBindings() }
        guard try statement.stepRow(db) else {
            throw StoreError(.corruptPayload, "the bytes of segment \(segment) are missing")
        }
        return Array(statement.blob(at: 0))
    }

    /// A block's range `offset ..< offset + length` of a blob of `size` bytes, or an error when the range does not
    /// lie inside it (the one check of a stored range, for whole and in-place reads alike).
    static func range(offset: Int64, length: Int64, size: Int) throws -> Range<Int> {
        guard offset >= 0, length >= 0, offset <= Int64(size) - length else {
            throw StoreError(.corruptPayload, "a block's range lies outside its segment's \(size) bytes")
        }
        return Int(offset)..<Int(offset + length)
    }

    /// Ranges of segments' blobs read in place (no whole blob loaded), through one incremental-blob handle moved
    /// from row to row. The handle closes when the reader goes out of scope: keep it inside the database access
    /// that made it.
    struct Reader: ~Copyable {
        private let db: Database
        private var handle: OpaquePointer?

        init(_ db: Database) { self.db = db }

        deinit { if let handle { sqlite3_blob_close(handle) } }

        /// `length` bytes from `offset` of the blob of the segment starting at `segment`.
        mutating func read(segment: Int64, offset: Int64, length: Int64) throws -> ArraySlice<UInt8> {
            var code: Int32
            if let handle {
                code = sqlite3_blob_reopen(handle, segment)
            } else {
                code = sqlite3_blob_open(db.sqliteConnection, "main", "segment_data", "data", segment, 0, &handle)
            }
            guard code == SQLITE_OK, let handle else {
                throw StoreError(.corruptPayload, "the bytes of segment \(segment) are missing")
            }
            let range = try SegmentData.range(offset: offset, length: length, size: Int(sqlite3_blob_bytes(handle)))
            var bytes = [UInt8](repeating: 0, count: range.count)
            guard !range.isEmpty else { return bytes[...] }
            code = bytes.withUnsafeMutableBytes {
                sqlite3_blob_read(handle, $0.baseAddress, Int32(range.count), Int32(range.lowerBound))
            }
            guard code == SQLITE_OK else {
                throw StoreError(.corruptPayload, "the bytes of segment \(segment) could not be read (SQLite code \(code))")
            }
            return bytes[...]
        }
    }
}
