import Dispatch
import GRDB
import GRDBSQLite
import Synchronization

/// Keeps checkpoints off the writer.
///
/// SQLite's automatic checkpoint runs on the connection that commits: every 1000 WAL pages the group-commit
/// writer stopped to copy pages into the database file and, under `synchronous=FULL`, to fsync it (measured: a
/// quarter of HTTP append throughput, and single-append p99 39 → 19 ms without it). Here the writer's
/// automatic checkpoint is off (`wal_autocheckpoint=0`); a WAL hook sees each commit's WAL size and
///
/// - from `checkpointFrames` on, asks a background queue, with its own connection, for a PASSIVE checkpoint
///   (it copies frames while the writer keeps committing and never blocks it);
/// - once the background has copied all but a few frames (`catchUpFrames`), finishes the copy on the writer,
///   so that the next transaction starts the WAL over (a WAL is only reset when every frame is in the file,
///   which a background copy racing a busy writer never sees);
/// - at `checkpointLimitFrames` checkpoints on the writer whatever the background did, so the WAL stays bounded.
///
/// Both connections use the store's `synchronous` level, so a checkpoint fsyncs the database before SQLite lets
/// the WAL be overwritten: durability is the same as with the automatic checkpoint.
final class WALCheckpointer: Sendable {
    struct Thresholds: Sendable {
        var start: Int32
        var catchUp: Int32
        var limit: Int32
    }

    private struct State {
        var scheduled = false
        /// WAL frames at the last commit; a smaller count means the WAL was started over.
        var lastFrames: Int32 = 0
        /// Bumped whenever the WAL starts over, so a background result from the previous WAL is ignored.
        var cycle = 0
        /// Frames the background had copied into the file (this cycle).
        var copied: Int32 = 0
    }

    private let path: String
    private let synchronous: String
    private let thresholds: Thresholds
    private let queue = DispatchQueue(label: "LedgerStore.checkpoint", qos: .utility)
    private let state = Mutex(State())

    init(path: String, synchronous: String, thresholds: Thresholds) {
        self.path = path
        self.synchronous = synchronous
        self.thresholds = thresholds
    }

    /// Turns the writer's automatic checkpoint off and hooks its commits. Call on the writer connection.
    func install(on db: Database) throws {
        try db.execute(sql: "PRAGMA wal_autocheckpoint = 0")
        // The hook's context lives as long as the connection: a small box, weakly pointing back, so a hook
        // firing after the store is gone finds nothing instead of freed memory. One box per opened store.
        let box = Unmanaged.passRetained(WeakCheckpointer(self)).toOpaque()
        sqlite3_wal_hook(db.sqliteConnection, { context, connection, _, frames in
            guard let context, let connection else { return SQLITE_OK }
            let checkpointer = Unmanaged<WeakCheckpointer>.fromOpaque(context).takeUnretainedValue().value
            checkpointer?.didCommit(frames: frames, writer: connection)
            return SQLITE_OK
        }, box)
    }

    /// Runs on the writer after each commit, with the WAL's size in frames.
    private func didCommit(frames: Int32, writer: OpaquePointer) {
        enum Action { case none, background, inline }
        let action: Action = state.withLock { state in
            if frames < state.lastFrames {
                state.cycle += 1
                state.copied = 0
            }
            state.lastFrames = frames
            guard frames >= thresholds.start else { return .none }
            if frames >= thresholds.limit || frames - state.copied <= thresholds.catchUp { return .inline }
            if state.scheduled { return .none }
            state.scheduled = true
            return .background
        }
        switch action {
        case .none: break
        case .inline: sqlite3_wal_checkpoint_v2(writer, "main", SQLITE_CHECKPOINT_PASSIVE, nil, nil)
        case .background: queue.async { self.checkpointInBackground() }
        }
    }

    private func checkpointInBackground() {
        let cycle = state.withLock { $0.cycle }
        var log: Int32 = 0
        var copied: Int32 = 0
        var code = SQLITE_ERROR
        if let connection = openConnection() {
            code = sqlite3_wal_checkpoint_v2(connection, "main", SQLITE_CHECKPOINT_PASSIVE, &log, &copied)
            // Closed again at once (a checkpoint is due every few MB): a connection left open would outlive the
            // pool's, and SQLite removes the `-wal` and `-shm` files only when the last connection closes.
            sqlite3_close_v2(connection)
        }
        state.withLock { state in
            state.scheduled = false
            // BUSY: the writer checkpoints right now; anything else leaves the work to the writer's limit.
            if code == SQLITE_OK, state.cycle == cycle { state.copied = max(state.copied, copied) }
        }
    }

    /// Waits for a background checkpoint in flight. The store calls it as it goes away, so that its pool's
    /// connections are the last to close and SQLite copies the rest of the WAL into the file and removes it. Until
    /// 2026-11-27 a CLI import of 300k events exited while its checkpoint ran: it left a 4 KiB file beside a 76 MB
    /// `-wal` holding every commit, which a copy or a read-only archive of the file alone would have lost.
    func finish() { queue.sync {} }

    /// A connection for one checkpoint (read-write, same `synchronous` as the store), or nil if it cannot open.
    private func openConnection() -> OpaquePointer? {
        var opened: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX
        guard sqlite3_open_v2(path, &opened, flags, nil) == SQLITE_OK, let opened,
            sqlite3_exec(opened, "PRAGMA synchronous = \(synchronous)", nil, nil, nil) == SQLITE_OK
        else {
            sqlite3_close_v2(opened)
            return nil
        }
        return opened
    }
}

/// The WAL hook's context: the checkpointer, if it still exists.
private final class WeakCheckpointer: Sendable {
    private let reference: Mutex<WeakReference>

    init(_ value: WALCheckpointer) { reference = Mutex(WeakReference(value: value)) }

    var value: WALCheckpointer? { reference.withLock { $0.value } }

    private struct WeakReference: @unchecked Sendable {
        weak var value: WALCheckpointer?
    }
}
