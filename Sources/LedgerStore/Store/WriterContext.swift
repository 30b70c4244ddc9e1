import Foundation
import GRDB
import Logging

/// Everything the single writer keeps between transactions: the zstd encoder, training samples and a
/// scratch hasher.
///
/// `@unchecked Sendable` because it is only ever touched inside the pool's serialized writer
/// (`pool.write*` closures), which GRDB runs one at a time.
final class WriterContext: @unchecked Sendable {
    let configuration: StoreConfiguration
    /// nil until loaded from the file, and again after a failed transaction.
    private var encoder: PayloadEncoder?
    private var trainer: DictionaryTrainer
    /// A dictionary training beside the writer, when `trainsInBackground`.
    private var training: TrainingJob?
    /// Events written since the current dictionary (or since the start when there is none).
    private var eventsUnderDictionary: Int64 = 0
    var hasher = ChainHasher()
    /// The encoder's dictionary, for compressors on other threads.
    let board = DictionaryBoard()
    /// The highest dictionary id this writer inserted, committed or not (kept across `reset`).
    private var highestDictionaryID: Int64 = 0

    init(configuration: StoreConfiguration) {
        self.configuration = configuration
        trainer = DictionaryTrainer(
            dictionarySize: configuration.dictionarySize, maximumSampleBytes: configuration.sampleBytes)
    }

    /// The encoder for this transaction, loading the newest dictionary from the file if needed.
    func prepare(_ db: Database) throws -> PayloadEncoder {
        if let encoder { return encoder }
        let made = PayloadEncoder(level: configuration.compressionLevel, board: board)
        let lastPosition = try EventStore.lastPosition(db)
        if let row = try Row.fetchOne(
            db, sql: "SELECT id, first_position, bytes FROM dictionaries ORDER BY id DESC LIMIT 1")
        {
            let id: Int64 = row["id"]
            let first: Int64 = row["first_position"]
            let bytes: [UInt8] = Array(row["bytes"] as Data)
            try made.use(dictionary: bytes, id: id)
            eventsUnderDictionary = max(0, lastPosition - first + 1)
        } else {
            eventsUnderDictionary = lastPosition
        }
        encoder = made
        return made
    }

    /// Forgets cached state after a rolled-back transaction; the next one reloads it from the file.
    func reset() {
        encoder = nil
        trainer.reset()
        training = nil
    }

    /// Notes the payloads of a batch that was written (inside its savepoint, which succeeded).
    func didWrite(_ payloads: [[UInt8]]) {
        eventsUnderDictionary += Int64(payloads.count)
        if training == nil, trainingDue(ignoringSamples: true) {
            for payload in payloads { trainer.add(payload) }
        }
    }

    /// Starts training a new dictionary when one is due (on a thread of its own when `trainsInBackground`) and
    /// installs a trained one. Runs between batches, inside the transaction, so the dictionary row commits or
    /// rolls back together with the rows compressed by it (a rolled-back transaction also drops a job in flight:
    /// `reset`). A failure is logged, never thrown: the batch before it is already written and rows keep the
    /// previous dictionary.
    func trainIfDue(_ db: Database, nextPosition: Int64, waiting: Bool = false, logger: Logger) {
        do {
            try train(db, nextPosition: nextPosition, waiting: waiting, logger: logger)
        } catch {
            logger.warning("dictionary training failed; keeping the current dictionary", metadata: ["ledger.error": "\(error)"])
            trainer.reset()
            training = nil
        }
    }

    /// Waits for the dictionary training on its thread, if any, and installs it (an import that seals as it goes
    /// waits rather than compress segments without one; `ImportSealer`).
    func finishTraining(_ db: Database, nextPosition: Int64, logger: Logger) {
        guard training != nil else { return }
        trainIfDue(db, nextPosition: nextPosition, waiting: true, logger: logger)
    }

    private func train(_ db: Database, nextPosition: Int64, waiting: Bool, logger: Logger) throws {
        guard let encoder else { return }
        let trained: [UInt8]?
        if let job = training {
            guard let result = waiting ? .some(job.finished) : job.result else { return }
            training = nil
            trained = result
        } else {
            guard trainingDue(ignoringSamples: false) else { return }
            guard !configuration.trainsInBackground else {
                training = TrainingJob(trainer)
                trainer.reset()
                return
            }
            trained = trainer.train()
        }
        guard let bytes = trained else {
            logger.debug("dictionary training found too little material; collecting again")
            trainer.reset()
            return
        }
        try install(bytes, encoder: encoder, db: db, nextPosition: nextPosition, logger: logger)
    }

    /// Stores `bytes` as the newest dictionary, used from `nextPosition` on.
    private func install(_ bytes: [UInt8], encoder: PayloadEncoder, db: Database, nextPosition: Int64, logger: Logger)
        throws
    {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        // Never an id this store used in a transaction that rolled back: its decoders may have loaded that
        // dictionary (an import reads what it wrote) and keep dictionaries by id.
        let id = max(try Int64.fetchOne(db, sql: "SELECT max(id) FROM dictionaries") ?? 0, highestDictionaryID) + 1
        try db.execute(
            sql: "INSERT INTO dictionaries(id, created_at, first_position, bytes) VALUES (?, ?, ?, ?)",
            arguments: [id, now, nextPosition, Data(bytes)])
        highestDictionaryID = id
        try encoder.use(dictionary: bytes, id: id)
        logger.info(
            "trained a zstd dictionary",
            metadata: ["ledger.dictionary": "\(id)", "ledger.dictionary.bytes": "\(bytes.count)",
                "ledger.position": "\(nextPosition)"])
        eventsUnderDictionary = 0
        trainer.reset()
    }

    private func trainingDue(ignoringSamples: Bool) -> Bool {
        let threshold: Int64
        if encoder?.dictionaryID == nil {
            threshold = Int64(configuration.firstDictionaryAfter)
        } else if configuration.retrainEvery > 0 {
            threshold = Int64(configuration.retrainEvery)
        } else {
            return false
        }
        // Collect samples over the last stretch before the threshold: recent payloads describe the
        // data the dictionary will compress.
        let minimumSamples = max(8, min(Int(threshold), 2_000))
        if ignoringSamples { return eventsUnderDictionary + Int64(minimumSamples) * 4 >= threshold }
        return eventsUnderDictionary >= threshold && trainer.sampleCount >= minimumSamples
    }
}
