import ActivityModel
import Crypto
import Foundation

/// What the `activities` row knows about an activity for the nightly job (`103_nightly_facts.sql`), and the
/// conservative decision "no finding is possible as of the run's time" that spares the fold of most activities.
///
/// An activity is settled when every rule of `NightlyRules` is decided without its events:
/// - nothing on its own stream happened after the run's time (`factsAt`), so the row is its state as of then;
/// - one request, no channel (a channel's broadcasts are on other streams), no failed push (no dead token, no
///   rejected delivery), no device observation (no system end, no `lost` verdict), no content the device would
///   drop (no `rejected` delivery): so it is live and `deadToken` and `undelivered` cannot apply;
/// - the run is before its 8 h system end: not `expired` (recorded ends and dismissals are skipped earlier);
/// - the truth is absent, or not done and either without a state or with the intended state (no `leaked`,
///   no `drift`: drift needs the truth to differ from the intended content).
/// Anything else is folded. A row written before 103 (all nulls) is never settled.
struct NightlyFacts: Sendable {
    /// Reasons an activity must be folded whatever the time, kept as bits in `doubts`.
    struct Doubt: OptionSet, Sendable {
        let rawValue: Int64
        static let failedPush = Doubt(rawValue: 1)
        static let observation = Doubt(rawValue: 2)
        static let unsendable = Doubt(rawValue: 4)
        /// A `subscribe` on its own stream: the fold may count channel broadcasts the projection does not.
        static let ownSubscribe = Doubt(rawValue: 8)
    }

    var startAt: Int64?
    var factsAt: Int64?
    var intendedHash: StateHash?
    var requests: Int64
    var doubts: Int64
    /// Its push type is a channel, or it subscribed to one.
    var channel: Bool

    static let systemEnd: Int64 = 8 * 3_600_000

    /// A SHA-256 held in four words, so a million of them cost no allocation.
    struct StateHash: Equatable, Sendable {
        static let byteCount = 32
        private var words: (UInt64, UInt64, UInt64, UInt64)

        /// Nil unless `bytes` are 32 (a stored hash of another length settles nothing: its activity is folded).
        init?(_ bytes: UnsafeRawBufferPointer) {
            guard bytes.count == Self.byteCount else { return nil }
            words = (
                bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self),
                bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
                bytes.loadUnaligned(fromByteOffset: 16, as: UInt64.self),
                bytes.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
        }

        init(_ digest: SHA256.Digest) { self = digest.withUnsafeBytes { Self($0)! } }

        func append(to bytes: inout [UInt8]) {
            withUnsafeBytes(of: words) { bytes.append(contentsOf: $0) }
        }

        static func == (a: Self, b: Self) -> Bool { a.words == b.words }
    }

    /// SHA-256 of the canonical JSON of a content state (`CanonicalJSON`, as the drift rule compares).
    static func hash(_ state: JSONValue) -> Data { Data(SHA256.hash(data: CanonicalJSON.bytes(state))) }


    /// True only when folding the activity as of `at` (Unix ms) cannot produce a finding; false when in doubt.
    /// The caller has checked that it was requested and neither ended nor dismissed by `at`.
    func settled(at: Int64, truth: TruthSpool.Row?) -> Bool {
        guard doubts == 0, requests == 1, !channel, let factsAt, factsAt <= at, let startAt, let intendedHash,
            startAt < Int64.max - Self.systemEnd, at < startAt + Self.systemEnd
        else { return false }
        guard let truth else { return true }
        if truth.done { return false }
        guard let hash = truth.stateHash else { return true }
        return hash == intendedHash
    }
}
