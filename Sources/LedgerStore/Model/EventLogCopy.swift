/// `activity-ledger copy --from A --to B`: a whole log from one backend into an empty one, either direction.
///
/// Every event keeps its position, stream, version, id, type, times and payload; the destination recomputes each
/// hash over those logical fields (`ChainHasher`), so the copy's chain is the original's: `digest` is the same on
/// both, and `verify --digest` of the source's digest passes on the copy. A source being written meanwhile is
/// copied up to the position its digest had when the copy began.
public enum EventLogCopy {
    public struct Report: Sendable, Hashable {
        public var events: Int64
        /// The source's digest when the copy began, which the copy now verifies against.
        public var digest: Digest
    }

    /// Events per append (one transaction each on the destination).
    public static let chunk = 2048

    /// Copies `source` into `destination`, which must hold no event; `validate` throws for an event the copy must
    /// refuse (the CLI passes the one event validator), and the copy stops before writing its page. `progress` gets (events copied, to copy).
    /// Throws `invalidEvent` when the destination is not empty, and `storage` when the copy's chain does not
    /// reach the source's digest (which cannot happen unless one of the two changed underneath).
    public static func copy(
        from source: any EventLog, to destination: any EventLog,
        validate: (RecordedEvent) throws -> Void = { _ in },
        progress: (@Sendable (Int64, Int64) -> Void)? = nil
    ) async throws -> Report {
        let existing = try await destination.lastPosition()
        guard existing == 0 else {
            throw StoreError(
                .invalidEvent,
                "\(destination.location) already holds \(existing) events: copy writes into an empty ledger only")
        }
        let digest = try await source.digest()
        try await destination.adoptNamespacedFrom(try await source.namespacedFrom())
        var copied: Int64 = 0
        while copied < digest.position {
            let page = try await source.events(after: copied, limit: Int(min(Int64(chunk), digest.position - copied)))
            guard let last = page.last else {
                throw StoreError(.storage, "\(source.location) ends at position \(copied), before its digest's \(digest.position)")
            }
            guard page.first?.position == copied + 1, last.position == copied + Int64(page.count) else {
                throw StoreError(.storage, "\(source.location): position \(copied + 1) is missing (verify it)")
            }
            // Every event goes through the caller's validator before its page is written: a source database
            // someone wrote into by hand cannot carry an event no door would take into the copy.
            for event in page { try validate(event) }
            let result = try await destination.append(AppendBatch(events: page.map { event in
                NewEvent(
                    id: event.id, stream: event.stream, type: event.type, at: event.at, recordedAt: event.recordedAt,
                    payload: event.payload)
            }))
            guard result.positions == page.map(\.position), !result.duplicate.contains(true) else {
                throw StoreError(
                    .storage,
                    "\(destination.location) took positions \(result.positions.first ?? 0)… for \(source.location)'s "
                        + "\(page[0].position)…: was it written to during the copy?")
            }
            copied = last.position
            progress?(copied, digest.position)
        }
        let report = try await destination.verify(upTo: digest)
        guard report.ok else {
            throw StoreError(
                .storage,
                "the copy in \(destination.location) does not reach \(source.location)'s digest \(digest): "
                    + "position \(report.firstBadPosition ?? 0): \(report.reason ?? "")")
        }
        return Report(events: copied, digest: digest)
    }
}
