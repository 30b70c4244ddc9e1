import Foundation
import GRDB

/// What `backup(into:progress:)` copied and proved.
public struct BackupReport: Sendable {
    /// The copy's last position and chain hash; the source has the same hash at that position.
    public var digest: Digest
    /// Events whose chain the copy's `verify` recomputed.
    public var verified: Int64
    /// Size of the copy in bytes.
    public var bytes: Int64
}

extension EventStore {
    /// Copies the whole file (log, dictionaries, projections, keys) into a new file at `destination` with SQLite's
    /// online backup, while other connections and processes keep writing.
    ///
    /// The copy is read inside one read transaction of the source (GRDB's `DatabasePool.backup`), so it is the
    /// file as of one commit: writes committed meanwhile are not in it and do not restart it. It is written
    /// under a temporary name beside `destination`, verified (the whole hash chain), its last hash compared with
    /// the source's at the same position, and only then renamed into place; a failure leaves no file.
    /// `progress` receives (pages copied, pages in all) after each step of 256 pages.
    ///
    /// Failures of writing the copy (an unwritable directory, a full disk, the destination made meanwhile) are
    /// `PartialFile.WriteError`s, named by the destination; the rest are the source's.
    public func backup(into destination: String, progress: ((Int, Int) -> Void)? = nil) throws -> BackupReport {
        let file = PartialFile(destination: destination)
        let partial = file.path
        defer { file.remove() }
        do {
            do {
                try copy(into: partial, progress: progress)
            } catch {
                throw PartialFile.WriteError(error, destination: destination) ?? error
            }
            var configuration = StoreConfiguration()
            configuration.readOnly = true
            configuration.busyTimeout = self.configuration.busyTimeout
            let copy = try EventStore(path: partial, configuration: configuration, logger: logger)
            let report = try copy.verify()
            guard report.ok else {
                throw StoreError(.storage, "the copy of \(path) does not verify: \(report.reason ?? "chain broken")")
            }
            let digest = report.lastGood
            let sourceHash = try pool.read { db in try reader.event(db, position: digest.position)?.hash }
            guard digest.position == 0 || sourceHash == digest.hash else {
                throw StoreError(.storage, "the copy's hash at position \(digest.position) differs from \(path)'s")
            }
            let bytes = (try FileManager.default.attributesOfItem(atPath: partial)[.size] as? NSNumber)?.int64Value ?? 0
            try file.publish()
            return BackupReport(digest: digest, verified: report.checked, bytes: bytes)
        } catch let error as PartialFile.WriteError {
            throw error
        } catch {
            throw Self.storageError(error, path: path, busyTimeout: configuration.busyTimeout)
        }
    }

    /// SQLite's backup into a new file, closed (and so complete on disk) before this returns.
    private func copy(into partial: String, progress: ((Int, Int) -> Void)?) throws {
        var config = Configuration()
        config.busyMode = .timeout(configuration.busyTimeout.seconds)
        let target = try DatabaseQueue(path: partial, configuration: config)
        try pool.backup(to: target, pagesPerStep: 256) { step in
            progress?(step.completedPageCount, step.totalPageCount)
        }
        // The copy's header says WAL, as the source's; fold any WAL back in so one file is the whole copy.
        try target.writeWithoutTransaction { db in
            _ = try db.checkpoint(.truncate)
        }
        try target.close()
    }
}
