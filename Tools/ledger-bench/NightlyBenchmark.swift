import ActivityModel
import ArgumentParser
import Foundation
import GRDB
import Ledger
import LedgerStore
import Logging

/// SPEC §8 "nightly reconcile over 1M activities ≤ 15 s", beside a plain-SQLite baseline in the same run:
/// a table of one raw JSON content per activity joined with the truth loaded into a table (what a hand-written
/// SQL job would do: no phases, no verdicts, no recording).
///
/// Call it with `try await NightlyBenchmark.run(activities: 1_000_000, directory: NSTemporaryDirectory())`, or
/// add `NightlyBenchmarkCommand.self` to the bench's subcommands (`ledger-bench nightly --activities N`).
enum NightlyBenchmark {
    static func run(activities count: Int, directory: String, durability: StoreConfiguration.Durability = .off)
        async throws
    {
        let pid = ProcessInfo.processInfo.processIdentifier
        let ledgerPath = directory + "/bench-nightly-\(pid).sqlite"
        let basePath = directory + "/bench-nightly-base-\(pid).sqlite"
        let truthPath = directory + "/bench-nightly-truth-\(pid).jsonl"
        for path in [ledgerPath, basePath] { Measure.removeDatabase(path) }
        defer {
            for path in [ledgerPath, basePath] { Measure.removeDatabase(path) }
            try? FileManager.default.removeItem(atPath: truthPath)
        }
        let workload = NightlyWorkload(count: count)
        print("nightly: \(count) activities, 3–4 events each, 1 in 100 with a planted finding")

        var configuration = LedgerConfiguration()
        configuration.store.durability = durability
        let ledger = try Ledger(path: ledgerPath, configuration: configuration, logger: Logger(label: "bench"))
        let generate = try await Measure.seconds {
            var batch: [LedgerEvent] = []
            for index in 0..<count {
                batch += workload.events(index)
                if batch.count >= 8192 {
                    _ = try await ledger.append(batch)
                    batch.removeAll(keepingCapacity: true)
                }
            }
            _ = try await ledger.append(batch)
        }
        try workload.writeTruth(to: truthPath)
        print(String(format: "  generated the ledger in %.1f s, the truth feed (%d lines)", generate, workload.truthLines))
        try await quiesce(ledger.pool)

        // The same work on both sides: the ledger is built before its timing starts, so the baseline's raw table
        // is loaded before its own; both timings read the truth feed and compare.
        let load = try await Measure.seconds {
            let pool = try DatabasePool(path: basePath)
            try loadRaw(pool, workload: workload)
        }

        // Each side is timed `runs` times on the same input and its median printed. The sides alternate, a run of
        // ours then one of the baseline: this machine's speed drifts by ±10 % within minutes (a plain Python loop
        // took 1.94–2.38 s, 2026-11-29), and until session 43 our three runs came first and the baseline's after
        // them, so a drift between the halves fell on one side only. Ours runs on a fresh copy of the quiesced
        // ledger each time, opened as a CLI run opens it; the baseline opens a fresh pool for each run too, its
        // truth table dropped in between. Both sides start cold, as a nightly job does.
        let before = Measure.currentRSSMiB() ?? 0
        var report: NightlyReport?
        var seconds: [Double] = []
        var baselines: [Double] = []
        var peak = 0.0
        for index in 0..<runs {
            let copyPath = directory + "/bench-nightly-\(pid)-run\(index).sqlite"
            Measure.removeDatabase(copyPath)
            defer { Measure.removeDatabase(copyPath) }
            try FileManager.default.copyItem(atPath: ledgerPath, toPath: copyPath)
            sync()
            let copy = try Ledger(path: copyPath, configuration: configuration, logger: Logger(label: "bench"))
            resetPeakRSS()
            seconds.append(try await Measure.seconds {
                report = try await copy.nightly(
                    truth: try JSONLinesReader(path: truthPath), runID: "bench", at: workload.runAt)
            })
            peak = max(peak, Measure.peakRSSMiB() ?? 0)
            // Closed here, untimed, as a nightly job's process ends: its close folds the run's WAL (~100 MB) into
            // the copy, which must not overlap the next timing.
            await copy.close()

            // A pool of its own each time, as ours opens each copy: no side starts with the caches its build warmed.
            let fresh = try DatabasePool(path: basePath)
            try await fresh.write { db in try db.execute(sql: "DROP TABLE IF EXISTS truth") }
            try await quiesce(fresh)
            baselines.append(try await Measure.seconds { try baselineJoin(fresh, truthPath: truthPath) })
        }
        let ours = Measure.median(seconds)
        guard let report else { return }
        let findings = NightlyFinding.allCases.map { "\($0.rawValue) \(report.summary[$0] ?? 0)" }
        print(String(format: "  nightly:  %6.2f s  %@  (median of %@ s; folded %d, findings %d: %@)", ours,
            Measure.rate(count, ours), Measure.list(seconds), report.activitiesFolded, report.entries.count,
            findings.joined(separator: ", ")))
        print(String(format: "  memory:   RSS %.0f MiB before, peak %.0f MiB during a run", before, peak))
        let expected = workload.expectedFindings
        print("  planted:  \(expected) findings; reported \(report.entries.count)\(report.entries.count == expected ? "" : "  MISMATCH")")
        let baseline = Measure.median(baselines)
        print(String(format: "  baseline: %6.2f s  %@  (median of %@ s; truth feed loaded into a table ⋈ raw JSON table, no fold; loading the raw table took %.2f s before, untimed like building the ledger)",
            baseline, Measure.rate(count, baseline), Measure.list(baselines), load))
        print("  each run beside the baseline's run after it: \(Measure.list(zip(seconds, baselines).map { $0 / $1 }))")
        print(String(format: "  nightly / baseline: %.2fx (medians; SPEC §8 target ≤ 1.0x)", ours / baseline))
        print(String(format: "  target ≤ 15 s for 1M activities: %@ (%.2f s scaled to 1M)",
            ours / Double(count) * 1_000_000 <= 15 ? "met" : "NOT met", ours / Double(count) * 1_000_000))
    }

    /// Timed runs of each side, alternating (the printed figure is their median; 3 until session 43).
    static let runs = 5

    /// Ends what building a side's file left running, before its timing starts: the WAL copied into the file and
    /// truncated, and every dirty page of the machine written out. Building the ledger writes ~1.2 GB; without
    /// this, the kernel's writeback of it (0.1–0.5 GB still dirty when the nightly run started, 2026-11-27) and
    /// the checkpoint of its last ~96 MB of WAL ran inside the timing of whichever side came first. The other
    /// benches checkpoint both sides the same way before they time.
    static func quiesce(_ pool: DatabasePool) async throws {
        try await pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        sync()
    }

    /// The baseline's log: raw JSON, one content per activity, in a plain table.
    static func loadRaw(_ pool: DatabasePool, workload: NightlyWorkload) throws {
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE raw (activity TEXT PRIMARY KEY, json TEXT NOT NULL) WITHOUT ROWID")
            let insert = try db.makeStatement(sql: "INSERT INTO raw VALUES (?, ?)")
            for index in 0..<workload.count {
                try insert.execute(arguments: [workload.id(index), #"{"state":{"eta":\#(index % 30 + 1)}}"#])
            }
        }
    }

    /// Loads the truth feed into a plain table and joins it with the raw table.
    static func baselineJoin(_ pool: DatabasePool, truthPath: String) throws {
        let reader = try JSONLinesReader(path: truthPath)
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE truth (activity TEXT PRIMARY KEY, json TEXT NOT NULL) WITHOUT ROWID")
            let insert = try db.makeStatement(sql: "INSERT OR REPLACE INTO truth VALUES (json_extract(?1, '$.activity'), ?1)")
            while let line = try reader.next() { try insert.execute(arguments: [String(decoding: line, as: UTF8.self)]) }
        }
        let differing = try pool.read { db in
            try Int.fetchOne(
                db,
                sql: """
                    SELECT count(*) FROM truth t LEFT JOIN raw r ON r.activity = t.activity
                    WHERE r.activity IS NULL OR json_extract(t.json, '$.state') IS NOT json_extract(r.json, '$.state')
                       OR json_extract(t.json, '$.done')
                    """) ?? 0
        }
        print("  baseline found \(differing) differing or done truth items")
    }

    /// Linux: writing 5 to clear_refs resets the peak RSS (VmHWM), so the peak covers the nightly run only.
    static func resetPeakRSS() {
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    }
}

/// The benchmark's activities: request + token + update (+ a 200 push) each; every 100th has a planted problem.
struct NightlyWorkload {
    let count: Int
    let start = Instant(rfc3339: "2026-11-20T21:00:00Z")!
    var runAt: Instant { start.adding(hours: 2) }

    func id(_ index: Int) -> String { String(format: "A%07d", index) }

    func events(_ index: Int) -> [LedgerEvent] {
        let id = id(index)
        let kind = index % 100
        let requested = kind == 4 ? start.adding(hours: -9) : start.adding(milliseconds: Int64(index % 3_600) * 1000)
        let stream = StreamName.activity(id)
        let token = String(format: "%064x", index)
        let updateID = UUID().uuidString.lowercased()
        var events = [
            LedgerEvent(
                stream: stream, at: requested,
                data: .request(
                    RequestData(
                        attributesType: "RideAttributes", attributes: ["ride": .string(id)],
                        content: ActivityContent(state: ["eta": .int(Int64(index % 30))]), pushType: .token,
                        installation: "I\(index / 3)"))),
            LedgerEvent(stream: stream, at: requested.adding(milliseconds: 500), source: .app, data: .token(TokenData(token: token))),
            LedgerEvent(
                id: updateID, stream: stream, at: requested.adding(milliseconds: 60_000),
                data: .update(
                    UpdateData(
                        content: ActivityContent(state: ["eta": .int(Int64(index % 30 + 1))]),
                        timestamp: requested.seconds + 60))),
        ]
        let status = kind == 3 ? 410 : (kind == 5 ? 400 : 200)
        events.append(
            LedgerEvent(
                stream: stream, at: requested.adding(milliseconds: 61_000), source: .apns,
                data: .push(PushData(refersTo: updateID, status: status, reason: status == 200 ? nil : "BadDeviceToken", token: token))))
        return events
    }

    /// The truth: equal to the update for most, done for kind 1, different for kind 2, an unknown id for kind 6.
    func truthLine(_ index: Int) -> String {
        let id = id(index)
        switch index % 100 {
        case 1: return #"{"activity":"\#(id)","state":{"eta":\#(index % 30 + 1)},"done":true}"#
        case 2: return #"{"activity":"\#(id)","state":{"eta":\#(index % 30 + 50)},"done":false}"#
        case 6: return #"{"activity":"M\#(id)","state":{"eta":1},"done":false}"#
        default: return #"{"activity":"\#(id)","state":{"eta":\#(index % 30 + 1)},"done":false}"#
        }
    }

    var truthLines: Int { count }

    /// leaked (1), drift (2), deadToken (3), expired (4), undelivered (5), missing (6): six per hundred.
    var expectedFindings: Int { (0..<count).filter { [1, 2, 3, 4, 5, 6].contains($0 % 100) }.count }

    func writeTruth(to path: String) throws {
        FileManager.default.createFile(atPath: path, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        var buffer: [UInt8] = []
        for index in 0..<count {
            buffer += truthLine(index).utf8
            buffer.append(0x0A)
            if buffer.count > 1 << 20 {
                handle.write(Data(buffer))
                buffer.removeAll(keepingCapacity: true)
            }
        }
        handle.write(Data(buffer))
    }
}

/// `ledger-bench nightly`: the command wrapper of `NightlyBenchmark.run`.
struct NightlyBenchmarkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nightly", abstract: "Nightly reconciliation over N activities vs a plain SQL join.")

    @Option(help: "Activities in the generated ledger.") var activities = 1_000_000
    @Option(help: "Directory for the benchmark files.") var directory = NSTemporaryDirectory()

    func run() async throws {
        try await NightlyBenchmark.run(activities: activities, directory: directory)
    }
}
