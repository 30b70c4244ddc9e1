import Foundation
import GRDB
import LedgerTesting
import Testing

/// Two processes opening one old file at the same moment (two `serve` started after an upgrade, a `migrate` beside
/// an `import`). Found by a probe: the second to run a missing migration failed ("table reconcile_runs already
/// exists"), and both caught the projections up, doubling `activities.events`.
@Suite("Two processes upgrading one file at once")
struct ConcurrentUpgradeTests {
    let directory = TemporaryDirectory()

    /// Runs `arguments` in two processes started together; their exit statuses and standard errors.
    func twice(_ arguments: [String]) throws -> [(Int32, String)] {
        let runner = try #require(CommandRunner("activity-ledger"))
        let processes = (0..<2).map { _ in
            let process = Process()
            process.executableURL = runner.executable
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = Pipe()
            return process
        }
        for process in processes { try process.run() }
        return processes.map { process in
            let error = (process.standardError as! Pipe).fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: error, as: UTF8.self))
        }
    }

    @Test("a missing migration and projections behind the log: both processes succeed, nothing counted twice")
    func together() throws {
        let corpus = directory.file("c.jsonl")
        try (CorpusGenerator(seed: 9, activities: 40, eventsPerActivity: 20).lines().joined(separator: "\n") + "\n")
            .write(toFile: corpus, atomically: true, encoding: .utf8)
        let original = directory.file("original.sqlite")
        let runner = try #require(CommandRunner("activity-ledger"))
        #expect(try runner.run(["import", corpus, "--db", original]).status == 0)
        let expected = try DatabaseQueue(path: original).read { db in
            try Int.fetchOne(db, sql: "SELECT sum(events) FROM activities")
        }
        for round in 0..<6 {
            let file = directory.file("old-\(round).sqlite")
            try FileManager.default.copyItem(atPath: original, toPath: file)
            // As a file written before `reconcile_runs`, whose projections are behind its log.
            try DatabaseQueue(path: file).write { db in
                try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'ledger.201_reconcile_runs'")
                try db.execute(sql: "DROP TABLE reconcile_runs")
                try db.execute(sql: "DELETE FROM activities")
                try db.execute(sql: "UPDATE projection_positions SET position = 0")
            }
            for (status, error) in try twice(["migrate", "--db", file, "--busy-timeout", "30"]) {
                #expect(status == 0, "round \(round): \(error)")
            }
            let counted = try DatabaseQueue(path: file).read { db in
                try Int.fetchOne(db, sql: "SELECT sum(events) FROM activities")
            }
            #expect(counted == expected, "round \(round)")
        }
    }
}
