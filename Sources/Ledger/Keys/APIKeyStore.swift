import ActivityModel
import Crypto
import Formats
import Foundation
import GRDB
import LedgerPostgres
import LedgerStore
import NIOCore
import PostgresNIO

/// API keys in the `api_keys` table of the ledger (its file, or its PostgreSQL database: `002_ledger.sql`),
/// stored as SHA-256 hashes.
///
/// A secret is `al_` + 32 random bytes in base64url; it is shown once by ``create(app:scopes:)`` and never
/// stored. Lookups hash the presented secret, so a leaked database does not leak usable keys.
///
/// On PostgreSQL the calls run on one connection of the store's own (`PostgresLine`), blocking their thread for
/// one round trip; `APIKeyCache` keeps them to one per hot key per half second.
public final class APIKeyStore: Sendable {
    private enum Backend: Sendable {
        case file(any DatabaseWriter)
        case postgres(PostgresLine)
    }

    private let backend: Backend

    /// Uses a database the caller already opened (e.g. the ledger's pool); migrates `api_keys`.
    public init(writer: any DatabaseWriter) throws {
        backend = .file(writer)
        try Self.migrator.migrateBesideOthers(writer)
    }

    /// The keys of `ledger`, wherever it lives.
    public convenience init(ledger: Ledger) throws {
        if let postgres = ledger.postgres {
            try self.init(line: PostgresLine(url: postgres.url, logger: postgres.logger))
        } else {
            try self.init(writer: ledger.store.pool)
        }
    }

    private init(line: PostgresLine) {
        backend = .postgres(line)
    }

    /// Opens (creating if needed) the SQLite file at `path` in WAL mode.
    public convenience init(path: String) throws {
        try self.init(writer: DatabasePool(path: path))
    }

    /// The identifiers `migrator` records in the file.
    public static let identifiers: Set<String> = ["apiKeys.v1"]

    /// The `api_keys` migration; the integrator may merge it into the ledger's migrator.
    public static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("apiKeys.v1") { db in
            try db.create(table: "api_keys", ifNotExists: true) { table in
                table.primaryKey("id", .text)
                table.column("hash", .blob).notNull().unique()
                table.column("app", .text).notNull().indexed()
                table.column("scopes", .text).notNull()
                table.column("created_at", .double).notNull()
                table.column("revoked_at", .double)
            }
        }
        return migrator
    }

    /// Why `app` cannot have a key (the rule `create` applies), or nil: empty, a control character, not in NFC.
    /// The CLI asks it before opening the file, so a refused key writes nothing.
    public static func appProblem(_ app: String) -> String? {
        if app.isEmpty { return "an API key needs an app (bundle id)" }
        return Identifier.problem(app).map { "--app: \($0)" }
    }

    /// Creates a key for `app`; returns the secret (to show once) and the stored record.
    public func create(app: String, scopes: Set<APIScope>, now: Date = Date()) throws -> (secret: String, key: APIKey) {
        if let problem = Self.appProblem(app) { throw APIKeyError(problem) }
        guard !scopes.isEmpty else { throw APIKeyError("an API key needs at least one scope (ingest, read, admin)") }
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let secret = "al_" + Self.base64URL(bytes)
        let hash = Self.hash(secret)
        let id = Hex.encode(hash.prefix(6))
        let key = APIKey(id: id, app: app, scopes: scopes, createdAt: now)
        switch backend {
        case .file(let writer):
            try writer.write { db in
                try db.execute(
                    sql: "INSERT INTO api_keys (id, hash, app, scopes, created_at) VALUES (?, ?, ?, ?, ?)",
                    arguments: [id, hash, app, Self.encode(scopes), now.timeIntervalSince1970]
                )
            }
        case .postgres(let line):
            var bindings = PostgresBindings()
            bindings.append(id)
            bindings.append(ByteBuffer(bytes: hash))
            bindings.append(app)
            bindings.append(Self.encode(scopes))
            bindings.append(now.timeIntervalSince1970)
            _ = try line.rows(
                "INSERT INTO api_keys (id, hash, app, scopes, created_at) VALUES ($1, $2, $3, $4, $5)", bindings)
        }
        return (secret, key)
    }

    /// The live (not revoked) key whose secret is `secret`, or nil.
    public func authenticate(_ secret: String) throws -> APIKey? {
        guard secret.hasPrefix("al_"), secret.utf8.count < 200 else { return nil }
        let hash = Self.hash(secret)
        switch backend {
        case .file(let writer):
            return try writer.read { db in
                try Row.fetchOne(db, sql: "SELECT * FROM api_keys WHERE hash = ? AND revoked_at IS NULL", arguments: [hash])
                    .map(Self.key(from:))
            }
        case .postgres(let line):
            var bindings = PostgresBindings()
            bindings.append(ByteBuffer(bytes: hash))
            return try line.rows(Self.postgresSelect + " WHERE hash = $1 AND revoked_at IS NULL", bindings)
                .first.map(Self.key(from:))
        }
    }

    /// Every key, or those of `app`, oldest first.
    public func list(app: String? = nil) throws -> [APIKey] {
        switch backend {
        case .file(let writer):
            return try writer.read { db in
                let rows =
                    if let app {
                        try Row.fetchAll(
                            db, sql: "SELECT * FROM api_keys WHERE app = ? ORDER BY created_at", arguments: [app])
                    } else {
                        try Row.fetchAll(db, sql: "SELECT * FROM api_keys ORDER BY created_at")
                    }
                return rows.map(Self.key(from:))
            }
        case .postgres(let line):
            var bindings = PostgresBindings()
            guard let app else { return try line.rows(Self.postgresSelect + " ORDER BY created_at").map(Self.key(from:)) }
            bindings.append(app)
            return try line.rows(Self.postgresSelect + " WHERE app = $1 ORDER BY created_at", bindings).map(Self.key(from:))
        }
    }

    /// Revokes the key with public id `id`; false when there is no such live key.
    @discardableResult
    public func revoke(id: String, now: Date = Date()) throws -> Bool {
        switch backend {
        case .file(let writer):
            return try writer.write { db in
                try db.execute(
                    sql: "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                    arguments: [now.timeIntervalSince1970, id]
                )
                return db.changesCount > 0
            }
        case .postgres(let line):
            var bindings = PostgresBindings()
            bindings.append(now.timeIntervalSince1970)
            bindings.append(id)
            return try !line.rows(
                "UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL RETURNING id", bindings
            ).isEmpty
        }
    }

    /// The columns `key(from:)` reads, on PostgreSQL.
    private static let postgresSelect = "SELECT id, app, scopes, created_at, revoked_at FROM api_keys"

    private static func key(from row: PostgresRow) throws -> APIKey {
        let (id, app, scopes, created, revoked) = try row.decode((String, String, String, Double, Double?).self)
        return APIKey(
            id: id, app: app, scopes: APIScope.parseList(scopes).scopes,
            createdAt: Date(timeIntervalSince1970: created), revokedAt: revoked.map(Date.init(timeIntervalSince1970:)))
    }

    private static func key(from row: Row) -> APIKey {
        let scopes = APIScope.parseList(row["scopes"] as String).scopes
        let revoked: Double? = row["revoked_at"]
        return APIKey(
            id: row["id"],
            app: row["app"],
            scopes: scopes,
            createdAt: Date(timeIntervalSince1970: row["created_at"]),
            revokedAt: revoked.map(Date.init(timeIntervalSince1970:))
        )
    }

    private static func encode(_ scopes: Set<APIScope>) -> String {
        scopes.sorted().map(\.rawValue).joined(separator: ",")
    }

    private static func hash(_ secret: String) -> Data {
        Data(SHA256.hash(data: Data(secret.utf8)))
    }

    private static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
