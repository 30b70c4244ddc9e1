import Foundation
import GRDB
import GRDBSQLite

// Thin helpers over the raw C API for the measured hot paths (append, scan, and the Ledger's inline projection
// rows); everything else goes through GRDB. The statements themselves come from `db.cachedStatement(sql:)`.
// GRDB's `StatementArguments` and `Row` subscripts are generic over the value type: on the writer they cost
// runtime metadata lookups for every value.

private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

public extension Statement {
    func bind(_ value: Int64, at index: Int32) {
        sqlite3_bind_int64(sqliteStatement, index, value)
    }

    func bind(_ value: Int64?, at index: Int32) {
        if let value { sqlite3_bind_int64(sqliteStatement, index, value) } else { sqlite3_bind_null(sqliteStatement, index) }
    }

    /// With its byte count, so text is stored exactly as given (a NUL would otherwise cut it).
    func bind(_ value: String, at index: Int32) {
        sqlite3_bind_text(sqliteStatement, index, value, Int32(value.utf8.count), transient)
    }

    func bind(_ value: String?, at index: Int32) {
        if let value { bind(value, at: index) } else { sqlite3_bind_null(sqliteStatement, index) }
    }

    func bind(_ data: Data?, at index: Int32) {
        guard let data else { sqlite3_bind_null(sqliteStatement, index); return }
        _ = data.withUnsafeBytes { raw in
            sqlite3_bind_blob(sqliteStatement, index, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(raw.count), transient)
        }
    }

    func bind(_ bytes: [UInt8], at index: Int32) {
        _ = bytes.withUnsafeBytes { raw in
            // A zero-length blob must still be a blob, not NULL.
            sqlite3_bind_blob(sqliteStatement, index, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(raw.count), transient)
        }
    }

    internal func bind(_ id: StoredEventID, at index: Int32) {
        switch id {
        case .uuid(let bytes): bind(bytes, at: index)
        case .text(let text): bind(text, at: index)
        }
    }

    /// Steps once; returns true for a row, false when done; throws a GRDB `DatabaseError` otherwise.
    func stepRow(_ db: Database) throws -> Bool {
        let code = sqlite3_step(sqliteStatement)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let extended = sqlite3_extended_errcode(db.sqliteConnection)
            let message = String(cString: sqlite3_errmsg(db.sqliteConnection))
            sqlite3_reset(sqliteStatement)
            throw DatabaseError(resultCode: ResultCode(rawValue: extended), message: message, sql: sql)
        }
    }

    func resetBindings() {
        sqlite3_reset(sqliteStatement)
        sqlite3_clear_bindings(sqliteStatement)
    }

    func int64(at column: Int32) -> Int64 { sqlite3_column_int64(sqliteStatement, column) }

    func optionalInt64(at column: Int32) -> Int64? {
        sqlite3_column_type(sqliteStatement, column) == SQLITE_NULL ? nil : sqlite3_column_int64(sqliteStatement, column)
    }

    func text(at column: Int32) -> String {
        guard let pointer = sqlite3_column_text(sqliteStatement, column) else { return "" }
        let count = Int(sqlite3_column_bytes(sqliteStatement, column))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    func optionalText(at column: Int32) -> String? {
        sqlite3_column_type(sqliteStatement, column) == SQLITE_NULL ? nil : text(at: column)
    }

    func optionalData(at column: Int32) -> Data? {
        sqlite3_column_type(sqliteStatement, column) == SQLITE_NULL ? nil : Data(blob(at: column))
    }

    /// The column's bytes, valid only until the next step or reset.
    func blob(at column: Int32) -> UnsafeRawBufferPointer {
        let pointer = sqlite3_column_blob(sqliteStatement, column)
        let count = Int(sqlite3_column_bytes(sqliteStatement, column))
        return UnsafeRawBufferPointer(start: pointer, count: pointer == nil ? 0 : count)
    }

    func isBlob(at column: Int32) -> Bool { sqlite3_column_type(sqliteStatement, column) == SQLITE_BLOB }

    func isNull(at column: Int32) -> Bool { sqlite3_column_type(sqliteStatement, column) == SQLITE_NULL }
}
