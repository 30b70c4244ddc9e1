import Foundation

/// A zstd dictionary trained on a thread of its own, so the writer keeps committing while zstd works.
///
/// Training 4 MB of samples into a 64 KB dictionary takes ~0.2 s here; on the writer that stalled every append
/// for as long, once at `firstDictionaryAfter` and again every `retrainEvery` events. The writer starts a job
/// when training is due and installs its result between two later batches (`WriterContext.trainIfDue`).
/// A pipeline of one item: the writer only polls it, and a job dropped by a rolled-back transaction ends on its
/// own once zstd returns.
final class TrainingJob: Sendable {
    private let pipeline: BoundedPipeline<[UInt8]?>

    /// Starts training from a copy of `trainer`'s samples.
    init(_ trainer: DictionaryTrainer) {
        pipeline = BoundedPipeline(name: "ledger-dictionary-training", capacity: 1) { pipeline in
            pipeline.send(trainer.train())
        }
    }

    /// nil while zstd is still training; then its dictionary, or `.some(nil)` when it found too little material.
    /// Read once: the writer drops the job when it has its result.
    var result: [UInt8]?? {
        guard pipeline.isReady else { return nil }
        return .some(finished)
    }

    /// Waits for zstd: the dictionary, or nil when it found too little material. Read once, like `result`.
    var finished: [UInt8]? { (try? pipeline.next()) ?? nil }
}
