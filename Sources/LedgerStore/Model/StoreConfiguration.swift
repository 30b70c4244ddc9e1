/// How an `EventStore` opens its file and compresses payloads.
public struct StoreConfiguration: Sendable {
    /// SQLite `synchronous` level for every connection.
    public enum Durability: String, Sendable {
        /// `synchronous=FULL`: an acknowledged append survives power loss (default).
        case full
        /// `synchronous=NORMAL`: survives a process crash; may lose the last commits on power loss.
        case normal
        /// `synchronous=OFF`: benchmarks and throwaway files only.
        case off
    }

    public var durability: Durability = .full
    /// Opens the file without writing; appends throw `readOnly`. The file must already hold every migration
    /// (else `outdated`); nothing is created or migrated, and a checkpointed file in a folder the process cannot
    /// write is opened `immutable` (see `EventStore+Open.swift`).
    public var readOnly = false
    /// How long a connection waits for another process's lock (SQLite's busy timeout) before failing with
    /// `busy`: writers in several processes take turns within it.
    public var busyTimeout: Duration = .seconds(5)
    /// Migration identifiers of the integrator's own tables: a file holding only those (e.g. API keys created
    /// before the first append) is adopted; a file with tables but none of these or the store's is refused.
    public var companionMigrations: Set<String> = []
    /// zstd level of a row's payload. With the trained dictionary and payloads of a few hundred bytes, level 1
    /// stores the bench corpus's rows as small as level 3 did (224.95 against 225.98 MB for 1M events) and imports
    /// with ~3 % less CPU (median wall 6.77 against 6.94 s over seven alternating runs; BENCHMARKS.md, session 38).
    public var compressionLevel: Int32 = 1
    /// Payloads written before the first dictionary is trained from them.
    public var firstDictionaryAfter = 8_000
    /// Events written under one dictionary before the next is trained from recent payloads (0 = never).
    public var retrainEvery = 1_000_000
    /// Target size of a trained dictionary in bytes.
    public var dictionarySize = 64 * 1024
    /// Memory kept for training samples.
    public var sampleBytes = 4 * 1024 * 1024
    /// Trains dictionaries on a thread of their own while appends go on (installed between later batches);
    /// false trains inside the writer, between the batch that made training due and the next (tests use it to
    /// know which rows a dictionary compresses).
    public var trainsInBackground = true
    /// Most events one group-commit transaction takes from the queue.
    public var maximumGroupEvents = 20_000
    /// WAL size (in 4 KiB frames) from which a background connection checkpoints (see `WALCheckpointer`).
    /// A checkpoint copies each page once however many commits rewrote it, and appends of random ids rewrite the
    /// same index pages over and over: 16,384 frames (64 MiB) rather than 4,096 made durable HTTP batches 3–5 %
    /// and singles 6–32 % faster in three alternating pairs (BENCHMARKS.md, session 20).
    public var checkpointFrames: Int32 = 16_384
    /// Frames the background may leave uncopied for the writer to finish the checkpoint and reset the WAL.
    public var checkpointCatchUpFrames: Int32 = 1024
    /// WAL size at which the writer checkpoints itself after a commit, whatever the background did.
    public var checkpointLimitFrames: Int32 = 65_536
    /// SQLite page cache of the writer connection, in KiB.
    public var cacheKiB = 32 * 1024
    /// SQLite page cache of each reader connection, in KiB; a store opens at most `maximumReaders` of them, so the
    /// readers together cache at most 6 × 4 MiB. With 32 MiB each (the writer's size, before session 33) `serve`
    /// answering 20,000 random state/timeline/audit requests reached 222 MiB resident, 179 MiB of it its own memory,
    /// and answered no faster than with 2, 4 or 8 MiB each (1.69–1.71k requests/s at every size); nor did 4 MiB slow
    /// `state --at` in process (BENCHMARKS.md, session 33). A random query's leaf pages are in no cache of this size;
    /// the kernel's page cache holds the file once for every connection.
    public var readerCacheKiB = 4 * 1024
    /// Most reader connections the store's pool opens (GRDB's default of 5 plus one for the ledger's query that runs
    /// on its caller's thread; named here because `readerCacheKiB`'s bound and the ledger's read threads, two fewer,
    /// count on it).
    public static let maximumReaders = 6
    /// How much of the file readers map into memory (SQLite's `mmap_size`) instead of copying each page they read
    /// out of the kernel with a `pread`: that copy and its system call were ~10 % of a `state --at` on a sealed
    /// ledger, and mapping took the state's p50 from 0.72 to 0.61 ms (BENCHMARKS.md, session 32). Readers only: the
    /// writer keeps writing through SQLite's pager. File pages a reader touches count in the process's resident size
    /// once per connection that mapped them (one copy in the page cache), so the map stops at 256 MiB per connection
    /// (the rest of a larger file is read as before). `serve` maps nothing unless asked (`--reader-map-mib`): a
    /// long-running server's readers would each count the whole file.
    public var readerMapBytes = 256 * 1024 * 1024
    /// Most events in one sealed segment (`seal`): larger segments compress a stream's events together more
    /// often, smaller ones keep the sealing transaction (which holds appends) shorter.
    public var segmentEvents = 4096
    /// zstd level of sealed blocks. With the trained dictionary and blocks of a few KiB, higher levels did not
    /// make them smaller: the bench corpus's blocks at level 1 are 64.1 B/event, at 3 64.3, at 6 65.2, and level 1
    /// seals ~15 % faster (BENCHMARKS.md, session 38).
    public var sealLevel: Int32 = 1
    /// Bytes of sealed-id entries an import that seals as it goes keeps in memory (`ImportSealer`, ~5 per event)
    /// before writing them to the file's buckets; past that, lookups of ids it may have filed (their
    /// `SealedIDs.Filter` bit set) ask the file too.
    public var importFiledBytes = 32 << 20
    /// When set, `run()` seals in the background: every `interval`, whole segments of the events beyond the
    /// newest `keepUnsealed` (recent events stay rows, where appends and their readers find them cheaply).
    public var backgroundSealing: BackgroundSealing?

    public struct BackgroundSealing: Sendable {
        public var interval: Duration
        public var keepUnsealed: Int
        public init(interval: Duration = .seconds(2), keepUnsealed: Int = 16_384) {
            self.interval = interval
            self.keepUnsealed = keepUnsealed
        }
    }

    /// Inline projector run inside every append transaction (can also be set later with `setProjector`).
    public var projector: (any InlineProjector)?

    public init() {}
}
