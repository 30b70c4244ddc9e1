import ArgumentParser
import Foundation
import Ledger

struct Keys: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Create, list and revoke API keys of the HTTP service.",
        discussion: """
            Example:
              activity-ledger keys create --app com.example.rides --scope ingest,read --db ledger.sqlite
            """,
        subcommands: [Create.self, List.self, Revoke.self]
    )

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create an API key; the key is printed once and stored only as a hash.",
            discussion: """
                Example:
                  activity-ledger keys create --app com.example.rides --scope ingest,read --db ledger.sqlite
                """
        )

        @OptionGroup var options: GlobalOptions

        @Option(help: "The app (bundle id) whose streams the key may touch.")
        var app: String

        @Option(help: "Comma-separated scopes: ingest, read, admin (admin implies the others).")
        var scope: String

        func validate() throws {
            // Checked before the file is opened (which may create or migrate it): a refused key writes nothing.
            if let problem = APIKeyStore.appProblem(app) {
                throw ValidationError(problem.hasPrefix("--app") ? problem : "--app: " + problem)
            }
        }

        func run() async throws {
            let (scopes, unknown) = APIScope.parseList(scope)
            if let unknown { throw ValidationError("unknown scope '\(unknown)' (use ingest, read, admin)") }
            guard !scopes.isEmpty else { throw ValidationError("--scope needs at least one of ingest, read, admin") }
            // `runReporting` closes the ledger as the command ends: the WAL folded into the file (until session 33
            // the keys commands left the whole new ledger in a `-wal` beside a 4 KiB file).
            try await runReporting(db: options.db) { try await create(scopes) }
        }

        private func create(_ scopes: Set<APIScope>) async throws {
            let store = try await options.openKeys(mustExist: false)
            let (secret, key) = try store.create(app: app, scopes: scopes)
            if options.json {
                let object: [String: Any] = [
                    "id": key.id, "app": key.app, "scopes": key.scopes.sorted().map(\.rawValue), "key": secret,
                ]
                let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
                print(String(decoding: data, as: UTF8.self))
            } else {
                print(secret)
                let scopes = key.scopes.sorted().map(\.rawValue).joined(separator: ",")
                printError("created key \(key.id) for app \(key.app) with scopes \(scopes); it is shown only once")
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List API keys (never their secrets).",
            discussion: """
                Example:
                  activity-ledger keys list --app com.example.rides --db ledger.sqlite --json
                """
        )

        @OptionGroup var options: GlobalOptions

        @Option(help: "Only the keys of this app.")
        var app: String?

        func validate() throws { try checkApp(app) }

        func run() async throws {
            try await runReporting(db: options.db) { try await list() }
        }

        private func list() async throws {
            let keys = try await options.openKeys(mustExist: true).list(app: app)
            if options.json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                encoder.dateEncodingStrategy = .iso8601
                print(String(decoding: try encoder.encode(keys), as: UTF8.self))
                return
            }
            if keys.isEmpty { print("no API keys") }
            for key in keys {
                let scopes = key.scopes.sorted().map(\.rawValue).joined(separator: ",")
                let state = key.revokedAt.map { "revoked \($0.formatted(.iso8601))" } ?? "active"
                print("\(key.id)  \(key.app)  \(scopes)  created \(key.createdAt.formatted(.iso8601))  \(state)")
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke an API key by its id.",
            discussion: """
                Example:
                  activity-ledger keys revoke 909a08459b34 --db ledger.sqlite
                """
        )

        @OptionGroup var options: GlobalOptions

        @Argument(help: "The key id shown by 'keys create' and 'keys list'.")
        var id: String

        func run() async throws {
            try await runReporting(db: options.db) {
                guard try await options.openKeys(mustExist: true).revoke(id: id) else {
                    // Not found (exit 1), not a usage error.
                    throw LedgerError(.notFound, "no active API key with id '\(id)'", field: "id")
                }
                print("revoked \(id)")
            }
        }
    }
}

/// Writes a line to standard error, keeping standard output for what scripts read.
private func printError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
