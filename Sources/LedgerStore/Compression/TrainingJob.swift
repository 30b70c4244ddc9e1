import Foundation
import Synchronization

/// A zstd dictionary trained on a thread of its own, so the writer keeps committing while zstd works.
///
/// Training 4 MB of samples into a 64 KB dictionary takes ~0.2 s here; on the writer that stalled every append
/// for as long, once at `firstDictionaryAfter` and again every `retrainEvery` events. The writer starts a job
/// when training is due and installs its result between two later batches (`WriterContext.trainIfDue`).
final class TrainingJob: Sendable {
    private enum State: Sendable {
        case running
        case finished([UInt8]?)
    }

    private let state = Mutex<State>(.running)

    /// Starts training from a copy of `trainer`'s samples.
    init(_ trainer: DictionaryTrainer) {
        let thread = Thread { [self] in
            let trained = trainer.train()
            state.withLock { $0 = .finished(trained) }
        }
        thread.name = "ledger-dictionary-training"
        thread.start()
    }

    /// nil while zstd is still training; then its dictionary, or `.some(nil)` when it found too little material.
    var result: [UInt8]?? {
        state.withLock { state in
            if case .finished(let trained) = state { return .some(trained) }
            return nil
        }
    }
}
