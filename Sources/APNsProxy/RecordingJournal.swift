import ActivityModel
import Foundation
import Ledger
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The exchanges the proxy answered but has not finished recording, in files beside the ledger
/// (`<db>.apns-journal-<n>.jsonl`), so that a `serve` killed between answering and recording records them when
/// it starts again.
///
/// One line per exchange is appended (`write(2)`, no fsync: it survives a killed process, not a power loss — an
/// fsync per push would cost more than the 2 ms the proxy may add). An exchange is finished once recorded, refused
/// by the validator, dropped, failed in storage, or out of its hold time; a file all of whose exchanges are finished
/// is truncated (the current one) or removed (an older one, after the current one grew past `rotateBytes`); a file
/// with any unfinished line is kept and replayed whole, which re-records nothing (see below).
/// Exchanges still held for an unknown token at shutdown stay in the journal and are held again after a restart
/// (their hold counts from the push's time). Replaying is idempotent: event ids derive from `apns-id` (and, for
/// an exchange sharing its `apns-id` with another, from the exchange's journaled `key`).
final class RecordingJournal: Sendable {
    private struct State {
        var generation: Int
        var descriptor: Int32
        var bytes: Int
        var pending: [Int: Int]
    }

    private let base: String
    private let state: Mutex<State>
    private let rotateBytes: Int
    /// Files of a previous run, read by ``recover()``.
    private let previous: [String]
    /// `<base>.lock`, held (flock) while this journal is in use: one proxy per journal.
    private let lock: Int32

    init(base: String, rotateBytes: Int = 8 << 20) throws(APNsProxyError) {
        self.base = base
        self.rotateBytes = rotateBytes
        lock = Glibc.open(base + ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard lock >= 0 else {
            throw APNsProxyError(.configuration, "cannot open \(base).lock: \(String(cString: strerror(errno)))")
        }
        guard flock(lock, LOCK_EX | LOCK_NB) == 0 else {
            Glibc.close(lock)
            throw APNsProxyError(
                .configuration, "another process runs the APNs proxy on this ledger (\(base).lock is locked)")
        }
        let directory = (base as NSString).deletingLastPathComponent
        let prefix = (base as NSString).lastPathComponent + "-"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.isEmpty ? "." : directory)) ?? []
        let generations = names.compactMap { name -> Int? in
            guard name.hasPrefix(prefix), name.hasSuffix(".jsonl") else { return nil }
            return Int(name.dropFirst(prefix.count).dropLast(".jsonl".count))
        }.sorted()
        previous = generations.map { Self.file(base, $0) }
        let generation = (generations.last ?? 0) + 1
        let descriptor = try Self.open(Self.file(base, generation))
        state = Mutex(State(generation: generation, descriptor: descriptor, bytes: 0, pending: [generation: 0]))
    }

    deinit {
        state.withLock { _ = Glibc.close($0.descriptor) }
        Glibc.close(lock)
    }

    static func file(_ base: String, _ generation: Int) -> String { "\(base)-\(generation).jsonl" }

    private static func open(_ path: String) throws(APNsProxyError) -> Int32 {
        let descriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw APNsProxyError(.configuration, "cannot open the APNs recording journal \(path): \(String(cString: strerror(errno)))")
        }
        return descriptor
    }

    /// The unfinished exchanges of the previous run, oldest first; call ``forgetRecovered()`` once they are
    /// appended again to this run's journal.
    func recover() -> [ProxiedExchange] {
        var exchanges: [ProxiedExchange] = []
        for path in previous {
            guard let data = FileManager.default.contents(atPath: path) else { continue }
            for line in data.split(separator: 0x0A) {
                // A line cut short by the kill is the only one that can fail; it was never answered whole.
                if let exchange = try? ProxiedExchange(journalLine: Array(line)) { exchanges.append(exchange) }
            }
        }
        return exchanges
    }

    func forgetRecovered() {
        for path in previous { unlink(path) }
    }

    /// Appends `exchange`; returns the generation to pass to ``finished(_:)``, or nil when it could not be written.
    func append(_ exchange: ProxiedExchange) -> Int? {
        var line = exchange.journalLine()
        line.append(0x0A)
        return state.withLock { state -> Int? in
            if state.bytes > rotateBytes {
                if let descriptor = try? Self.open(Self.file(base, state.generation + 1)) {
                    Glibc.close(state.descriptor)
                    if state.pending[state.generation] == 0 {
                        state.pending[state.generation] = nil
                        unlink(Self.file(base, state.generation))
                    }
                    state.generation += 1
                    state.descriptor = descriptor
                    state.bytes = 0
                    state.pending[state.generation] = 0
                }
            }
            let written = line.withUnsafeBytes { write(state.descriptor, $0.baseAddress, $0.count) }
            guard written == line.count else { return nil }
            state.bytes += line.count
            state.pending[state.generation, default: 0] += 1
            return state.generation
        }
    }

    /// One exchange of `generation` is finished.
    func finished(_ generation: Int) {
        state.withLock { state in
            guard let count = state.pending[generation] else { return }
            state.pending[generation] = count - 1
            guard count == 1 else { return }
            if generation == state.generation {
                if ftruncate(state.descriptor, 0) == 0 { state.bytes = 0 }
            } else {
                state.pending[generation] = nil
                unlink(Self.file(base, generation))
            }
        }
    }

    /// At shutdown: removes the current file when nothing in it is unfinished.
    func close() {
        state.withLock { state in
            if state.pending[state.generation] == 0 { unlink(Self.file(base, state.generation)) }
        }
    }
}

extension ProxiedExchange {
    /// `{"app","at","token","headers":[[name,value]…],"body","status","apnsId","answer","key"}`, bodies in base64.
    func journalLine() -> [UInt8] {
        var object = JSONObject()
        object["app"] = .string(app)
        object["at"] = .int(at.milliseconds)
        if let token { object["token"] = .string(token) }
        object["headers"] = .array(headers.map { .array([.string($0.name), .string($0.value)]) })
        object["body"] = .string(Data(body).base64EncodedString())
        object["status"] = .int(Int64(status))
        if let apnsID { object["apnsId"] = .string(apnsID) }
        object["answer"] = .string(Data(answerBody).base64EncodedString())
        object["key"] = .string(key)
        return JSONValue.object(object).compactBytes
    }

    init(journalLine line: [UInt8]) throws {
        let value = try JSONParser.parse(line)
        guard let app = value["app"]?.stringValue, let at = value["at"]?.numberValue?.int64Value,
            let status = value["status"]?.numberValue?.int64Value,
            let body = value["body"]?.stringValue.flatMap({ Data(base64Encoded: $0) }),
            let answer = value["answer"]?.stringValue.flatMap({ Data(base64Encoded: $0) }),
            let headers = value["headers"]?.arrayValue
        else { throw APNsProxyError(.configuration, "not a journal line") }
        self.init(
            app: app, at: Instant(milliseconds: at), token: value["token"]?.stringValue,
            headers: headers.compactMap { pair in
                guard let items = pair.arrayValue, items.count == 2, let name = items[0].stringValue,
                    let value = items[1].stringValue
                else { return nil }
                return (name, value)
            },
            body: Array(body), status: Int(status), apnsID: value["apnsId"]?.stringValue, answerBody: Array(answer),
            // A line of a version without keys: one derived from the line, the same at every replay.
            key: value["key"]?.stringValue ?? DerivedID.uuid("journal:" + String(decoding: line, as: UTF8.self)))
    }
}
