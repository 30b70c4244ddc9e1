import Foundation
import LedgerPostgres
import LedgerStore
import LedgerTesting
import Logging
import PostgresNIO
import Testing

/// SPEC §6 "Scale-out" under kill -9: three writer processes (`ledger-bench postgres-load`, each its own
/// `PostgresEventLog` and connection) append to one database on shared streams; one is killed without warning
/// mid-load, the others finish. The log must stay one gapless, verifiable chain that holds every acknowledged
/// batch exactly once and no batch in part. Runs on the cluster of `LEDGER_TEST_POSTGRES` (as the conformance
/// suite; `LEDGER_SKIP_POSTGRES=1` leaves it out).
@Suite("PostgreSQL log: kill -9 of one of three writer processes")
struct ProcessKillTests {
    static let enabled = ProcessInfo.processInfo.environment["LEDGER_SKIP_POSTGRES"] != "1"
    static let batchSize = 10
    static let survivorBatches = 400

    @Test("a writer killed mid-load leaves a gapless, verifiable log with every acknowledged batch whole", .enabled(if: enabled))
    func killOneOfThree() async throws {
        let bench = try #require(CommandRunner("ledger-bench"), "ledger-bench not found next to the test bundle")
        let database = try await TestDatabase.create()
        // Migrated before the writers start (they would take turns migrating anyway), and the handle verify uses.
        let log = try await PostgresEventLog(url: database.url, logger: quiet)
        var writers: [WriterProcess] = []
        do {
            // The victim is given far more batches than it can write before the kill. It starts first; the others
            // start once it is writing, and the kill comes once they are writing too, so that all three are under
            // way at the kill however quickly the others would finish (an append after a process's own takes one
            // round trip: 150 batches can be over in well under a second).
            writers = [try WriterProcess(
                bench.executable, url: database.url, name: "victim", batches: 100_000, batchSize: Self.batchSize)]
            let victim = writers[0]
            try await victim.waitForAcknowledgements(5, timeout: .seconds(60))
            for name in ["alpha", "beta"] {
                writers.append(try WriterProcess(
                    bench.executable, url: database.url, name: name, batches: Self.survivorBatches, batchSize: Self.batchSize))
            }
            for writer in writers[1...] { try await writer.waitForAcknowledgements(3, timeout: .seconds(60)) }
            try await Task.sleep(for: .milliseconds(Int.random(in: 0...20)))
            let othersRunning = writers[1...].allSatisfy(\.process.isRunning)
            victim.process.signal(SIGKILL)
            for writer in writers { try await writer.waitForExit(timeout: .seconds(120)) }

            #expect(victim.process.termination == .signaled(SIGKILL),
                    "the victim ended before the kill: \(victim.errors())")
            #expect(othersRunning, "the other writers had finished before the kill: it was not under load")
            for writer in writers[1...] {
                #expect(writer.process.termination == .exited(0),
                        "\(writer.name) failed: \(writer.errors())")
            }
            let acknowledged = writers.map { writer in (writer.name, writer.acknowledged()) }
            #expect(acknowledged[0].1.count >= 5)
            for (name, batches) in acknowledged[1...] {
                #expect(batches.count == Self.survivorBatches, "\(name) acknowledged \(batches.count) batches")
            }

            let expectations = acknowledged.map { name, batches in
                LogAudit.Writer(name: name, acknowledged: batches, finished: name != "victim" ? Self.survivorBatches : nil)
            }
            let problems = try await LogAudit.problems(url: database.url, writers: expectations, batchSize: Self.batchSize)
            #expect(problems.isEmpty, "\(problems.prefix(10).joined(separator: "; "))")
            let report = try await log.verify(upTo: nil)
            #expect(report.ok, "\(report.reason ?? "")")
            let last = try await log.lastPosition()
            #expect(report.checked == last)

            // The log takes appends after the crash, on the same chain.
            _ = try await log.append(AppendBatch(events: [
                NewEvent(id: "after-kill", stream: "activity:shared-0", type: "update", at: 1, payload: Array("{}".utf8)),
            ]))
            #expect(try await log.verify(upTo: nil).ok)

            // The audit can fail: a row removed from the middle is named as a gap and as a lost acknowledged id.
            let (_, alphaBatches) = acknowledged[1]
            let lost = try #require(alphaBatches[alphaBatches.count / 2]?.first)
            try await TestDatabase.admin(database.url) { client in
                _ = try await client.query("DELETE FROM events WHERE id = \(lost.id)")
            }
            let damaged = try await LogAudit.problems(url: database.url, writers: expectations, batchSize: Self.batchSize)
            #expect(damaged.contains { $0.contains("gap") && $0.contains("\(lost.position)") }, "\(damaged)")
            #expect(damaged.contains { $0.contains("\(lost.id)") && $0.contains("acknowledged") }, "\(damaged)")
            #expect(damaged.contains { $0.contains("half-written") }, "\(damaged)")
            let damagedReport = try await log.verify(upTo: nil)
            #expect(!damagedReport.ok)
        } catch {
            for writer in writers { writer.process.signal(SIGKILL) }
            await log.close()
            try? await database.drop()
            throw error
        }
        await log.close()
        try await database.drop()
    }
}

/// What the `events` table must show after the writers: one gapless log, unique ids, per-stream versions 1…n,
/// a head naming the last row, and each writer's batches whole (all `batchSize` ids at consecutive positions) or
/// absent, every acknowledged one at the positions acknowledged.
enum LogAudit {
    struct Writer: Sendable {
        var name: String
        /// Acknowledged batches by number, with the (id, position) pairs printed.
        var acknowledged: [Int: [Acknowledged]]
        /// Batches a writer that exited normally appended (all must be stored); nil for one killed.
        var finished: Int?
    }

    struct Acknowledged: Sendable, Hashable {
        var id: String
        var position: Int64
    }

    struct Row: Sendable {
        var position: Int64
        var id: String
        var stream: String
        var version: Int64
    }

    static func problems(url: String, writers: [Writer], batchSize: Int) async throws -> [String] {
        let (rows, head) = try await TestDatabase.admin(url) { client in
            var rows: [Row] = []
            for try await (position, id, stream, version) in try await client.query(
                "SELECT position, id, stream, version FROM events ORDER BY position"
            ).decode((Int64, String, String, Int64).self) {
                rows.append(Row(position: position, id: id, stream: stream, version: version))
            }
            let head = try await client.query("SELECT position FROM log_head").collect().first?.decode(Int64.self) ?? -1
            return (rows, head)
        }
        var problems: [String] = []

        // Positions 1…N, no gap; the head at N.
        var expected: Int64 = 1
        for row in rows {
            if row.position != expected {
                problems.append("gap: position \(expected) missing (next stored is \(row.position))")
                expected = row.position
            }
            expected += 1
        }
        if head != Int64(rows.count) || head != (rows.last?.position ?? 0) {
            problems.append("log_head names \(head) for \(rows.count) rows ending at \(rows.last?.position ?? 0)")
        }

        // Ids unique; each stream's versions 1, 2, … in position order.
        var byID: [String: Row] = [:]
        var lastVersion: [String: Int64] = [:]
        for row in rows {
            if byID.updateValue(row, forKey: row.id) != nil { problems.append("id \(row.id) stored twice") }
            let version = (lastVersion[row.stream] ?? 0) + 1
            if row.version != version {
                problems.append("stream \(row.stream): version \(row.version) at position \(row.position), expected \(version)")
            }
            lastVersion[row.stream] = row.version
        }

        // Batches: all or nothing, at consecutive positions; the acknowledged ones where acknowledged.
        var stored: [String: [Int: [Row]]] = [:]
        for row in rows where row.id != "after-kill" {
            let parts = row.id.split(separator: "-")
            guard parts.count == 3, let batch = Int(parts[1]), let index = Int(parts[2]), (0..<batchSize).contains(index),
                writers.contains(where: { $0.name == parts[0] })
            else {
                problems.append("id \(row.id) was written by no writer")
                continue
            }
            stored[String(parts[0]), default: [:]][batch, default: []].append(row)
        }
        for writer in writers {
            let batches = stored[writer.name] ?? [:]
            for (number, rows) in batches.sorted(by: { $0.key < $1.key }) {
                let positions = rows.map(\.position).sorted()
                if rows.count != batchSize {
                    problems.append("\(writer.name) batch \(number) half-written: \(rows.count) of \(batchSize) ids stored")
                } else if positions.last! - positions.first! != Int64(batchSize - 1) {
                    problems.append("\(writer.name) batch \(number) not at consecutive positions: \(positions)")
                }
            }
            for (number, acks) in writer.acknowledged {
                for ack in acks {
                    guard let row = byID[ack.id] else {
                        problems.append("acknowledged id \(ack.id) (\(writer.name) batch \(number)) is not stored")
                        continue
                    }
                    if row.position != ack.position {
                        problems.append("acknowledged id \(ack.id) at \(ack.position) is stored at \(row.position)")
                    }
                }
            }
            // Batches are appended one after another: stored ones are 1…m, m the acknowledged count, or one more
            // for a killed writer (its last append may have committed before its line was written).
            let numbers = batches.keys.sorted()
            let acknowledgedCount = writer.acknowledged.count
            let allowed = writer.finished.map { [$0] } ?? [acknowledgedCount, acknowledgedCount + 1]
            if numbers != (0..<numbers.count).map({ $0 + 1 }) || !allowed.contains(numbers.count) {
                problems.append(
                    "\(writer.name): \(numbers.count) batches stored (\(numbers.first ?? 0)…\(numbers.last ?? 0)), \(acknowledgedCount) acknowledged")
            }
        }
        return problems
    }
}

/// A `ledger-bench postgres-load` child whose stdout (its acknowledgements) and stderr are read as they come.
final class WriterProcess: @unchecked Sendable {
    let name: String
    let process: ChildProcess
    private let stdout = PipeReader()
    private let stderr = PipeReader()

    init(_ executable: URL, url: String, name: String, batches: Int, batchSize: Int) throws {
        self.name = name
        process = try ChildProcess(
            executable,
            ["postgres-load", "--url", url, "--writer", name, "--batches", "\(batches)", "--batch-size", "\(batchSize)"],
            stdout: .descriptor(stdout.pipe.fileHandleForWriting.fileDescriptor),
            stderr: .descriptor(stderr.pipe.fileHandleForWriting.fileDescriptor))
        // The child holds the writing ends now; the readers see their end when it exits.
        try stdout.pipe.fileHandleForWriting.close()
        try stderr.pipe.fileHandleForWriting.close()
        stdout.start()
        stderr.start()
    }

    /// The batches acknowledged so far, by number: only whole lines (`ack B K id@pos … end`) count.
    func acknowledged() -> [Int: [LogAudit.Acknowledged]] {
        var batches: [Int: [LogAudit.Acknowledged]] = [:]
        for line in stdout.completeLines() {
            let parts = line.split(separator: " ")
            guard parts.count >= 4, parts[0] == "ack", parts.last == "end", let number = Int(parts[1]),
                let count = Int(parts[2]), parts.count == count + 4
            else { continue }
            batches[number] = parts[3..<(3 + count)].compactMap { pair in
                let halves = pair.split(separator: "@")
                guard halves.count == 2, let position = Int64(halves[1]) else { return nil }
                return LogAudit.Acknowledged(id: String(halves[0]), position: position)
            }
        }
        return batches
    }

    func errors() -> String { stderr.completeLines().suffix(5).joined(separator: " | ") }

    func waitForAcknowledgements(_ count: Int, timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        while acknowledged().count < count {
            guard process.isRunning else { throw WriterFailure("\(name) exited before \(count) acknowledgements: \(errors())") }
            guard ContinuousClock.now < deadline else { throw WriterFailure("\(name): no \(count) acknowledgements in \(timeout)") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Waits for the process to end and for its pipes to be read to their end.
    func waitForExit(timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning || !stdout.finished || !stderr.finished {
            guard ContinuousClock.now < deadline else {
                process.signal(SIGKILL)
                throw WriterFailure("\(name) did not finish in \(timeout)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        process.waitUntilExit()
    }
}

struct WriterFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Reads a pipe on a thread of its own (never on the cooperative pool) into a buffer.
final class PipeReader: @unchecked Sendable {
    let pipe = Pipe()
    private let lock = NSLock()
    private var data = Data()
    private var ended = false

    func start() {
        let handle = pipe.fileHandleForReading
        Thread.detachNewThread { [self] in
            while true {
                let chunk = handle.availableData
                lock.lock()
                if chunk.isEmpty {
                    ended = true
                    lock.unlock()
                    return
                }
                data.append(chunk)
                lock.unlock()
            }
        }
    }

    var finished: Bool {
        lock.lock()
        defer { lock.unlock() }
        return ended
    }

    /// The lines read so far that end in a newline.
    func completeLines() -> [String] {
        lock.lock()
        let text = String(decoding: data, as: UTF8.self)
        lock.unlock()
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        lines.removeLast()  // after the last newline: empty, or a line not yet whole
        return lines.filter { !$0.isEmpty }
    }
}
