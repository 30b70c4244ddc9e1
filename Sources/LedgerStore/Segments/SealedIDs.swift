import Crypto
import Foundation
import GRDB

/// Where sealed event ids are filed, so that a lookup by id reads one small row and decodes only the blocks it
/// names (Schemas/sql/README.md, "Lookups stay indexed").
///
/// Since 2026-11-29 (`004_sealed_id_buckets.sql`) an id goes into one of 65,536 buckets by the first 16 bits of its
/// SHA-256; the bucket's row holds one entry per id, back to back: the next 15 bits (2 bytes, big-endian), then the
/// block holding the event (varint). That is ~5 bytes per sealed event where `sealed_ids`' B-tree entries took 15.4
/// (BENCHMARKS.md, session 38). Ids sealed before stay in `sealed_ids` under the first 47 bits, and a lookup asks
/// both. Different ids may share bits; a lookup decodes each candidate block and compares the ids.
enum SealedIDs {
    /// An id's SHA-256 bits as both layouts file them.
    struct Hash {
        var bucket: Int64
        var entry: UInt16
        var legacyKey: Int64

        init(_ id: String) {
            // The bytes in place (an array of them was allocated for every id an import appends).
            let digest =
                id.utf8.withContiguousStorageIfAvailable { SHA256.hash(data: UnsafeRawBufferPointer($0)) }
                ?? SHA256.hash(data: Array(id.utf8))
            var bits: UInt64 = 0
            digest.withUnsafeBytes { bytes in
                for index in 0..<6 { bits = bits << 8 | UInt64(bytes[index]) }
            }
            bucket = Int64(bits >> 32)
            entry = UInt16(truncatingIfNeeded: bits >> 17) & 0x7fff
            legacyKey = Int64(bits >> 1)
        }
    }

    /// A bit per id hash (`bits` of its 31 bucket and entry bits), set for every id an import holds or files and
    /// never cleared (4 MiB, allocated with the first): most ids an import appends are new, and one whose bit is
    /// clear is neither held, nor in the pending entries (two cache misses away), nor among the entries the import
    /// wrote to the file already.
    struct Filter {
        private var words: [UInt64] = []
        static let bits = 25

        /// Whether `hash` may have been inserted (false: certainly not).
        func mayHave(_ hash: Hash) -> Bool {
            guard !words.isEmpty else { return false }
            let bit = Self.bit(hash)
            return words[bit >> 6] & (1 << UInt64(bit & 63)) != 0
        }

        mutating func insert(_ hash: Hash) {
            if words.isEmpty { words = Array(repeating: 0, count: 1 << (Self.bits - 6)) }
            let bit = Self.bit(hash)
            words[bit >> 6] |= 1 << UInt64(bit & 63)
        }

        private static func bit(_ hash: Hash) -> Int { Int(hash.bucket << 15 | Int64(hash.entry)) & (1 << bits - 1) }
    }

    /// Files each (id, block) in its bucket, in the caller's write transaction.
    static func file(_ ids: [(id: String, block: Int64)], in db: Database) throws {
        var pending = Pending()
        for (id, block) in ids { pending.add(Hash(id), block: block) }
        try pending.write(db)
    }

    /// Entries gathered in memory and appended to their buckets' rows in one pass (`write`): an import that seals
    /// as it goes (`ImportSealer`) files a million ids with 65,536 row writes at most, and asks these entries, not
    /// the file, whether an id it appends was appended before.
    struct Pending {
        /// One entry list per bucket, in the rows' layout; empty until the first entry.
        private var buckets: [[UInt8]] = []
        /// Bytes of every entry held.
        private(set) var bytes = 0

        mutating func add(_ hash: Hash, block: Int64) {
            if buckets.isEmpty { buckets = Array(repeating: [], count: 1 << 16) }
            let before = buckets[Int(hash.bucket)].count
            buckets[Int(hash.bucket)].append(UInt8(truncatingIfNeeded: hash.entry >> 8))
            buckets[Int(hash.bucket)].append(UInt8(truncatingIfNeeded: hash.entry))
            Varint.append(UInt64(block), to: &buckets[Int(hash.bucket)])
            bytes += buckets[Int(hash.bucket)].count - before
        }

        /// The blocks of the entries held that share `hash`'s bits.
        func candidates(_ hash: Hash) throws -> [Int64] {
            guard !buckets.isEmpty else { return [] }
            return try buckets[Int(hash.bucket)].withUnsafeBytes { try SealedIDs.blocks(in: $0, matching: hash) }
        }

        /// Appends every entry held to its bucket's row, in bucket order, and forgets them.
        mutating func write(_ db: Database) throws {
            guard !buckets.isEmpty else { return }
            let append = try db.cachedStatement(
                sql: """
                    INSERT INTO sealed_id_buckets(bucket, entries) VALUES (?, ?)
                    ON CONFLICT(bucket) DO UPDATE SET entries = entries || excluded.entries
                    """)
            for bucket in buckets.indices where !buckets[bucket].isEmpty {
                try append.execute(arguments: [bucket, Data(buckets[bucket])])
            }
            buckets = []
            bytes = 0
        }
    }

    /// The blocks that may hold `id`, in ascending order.
    static func candidateBlocks(_ db: Database, id: String) throws -> [Int64] {
        let hash = Hash(id)
        var blocks: Set<Int64> = []
        let bucket = try db.cachedStatement(sql: "SELECT entries FROM sealed_id_buckets WHERE bucket = ?")
        bucket.bind(hash.bucket, at: 1)
        defer { bucket.resetBindings() }
        if try bucket.stepRow(db) { blocks.formUnion(try Self.blocks(in: bucket.blob(at: 0), matching: hash)) }
        let legacy = try db.cachedStatement(sql: "SELECT block FROM sealed_ids WHERE key = ?")
        legacy.bind(hash.legacyKey, at: 1)
        defer { legacy.resetBindings() }
        while try legacy.stepRow(db) { blocks.insert(legacy.int64(at: 0)) }
        return blocks.sorted()
    }

    /// The blocks of a bucket's `entries` whose 15 bits are `hash`'s.
    private static func blocks(in entries: UnsafeRawBufferPointer, matching hash: Hash) throws -> [Int64] {
        var blocks: [Int64] = []
        var offset = 0
        while offset < entries.count {
            guard offset + 2 < entries.count else { throw damaged(hash.bucket) }
            let entry = UInt16(entries[offset]) << 8 | UInt16(entries[offset + 1])
            offset += 2
            guard let block = Varint.read(entries, at: &offset) else { throw damaged(hash.bucket) }
            if entry == hash.entry { blocks.append(Int64(bitPattern: block)) }
        }
        return blocks
    }

    private static func damaged(_ bucket: Int64) -> StoreError {
        StoreError(.corruptPayload, "the sealed ids' bucket \(bucket) is damaged: an entry runs past its end")
    }
}
