import CZstd

/// Collects recent payloads and trains zstd dictionaries from them (ZDICT_trainFromBuffer).
///
/// Not Sendable: lives in the writer context.
struct DictionaryTrainer {
    let dictionarySize: Int
    let maximumSampleBytes: Int
    private(set) var samples: [UInt8] = []
    private(set) var sizes: [Int] = []

    init(dictionarySize: Int, maximumSampleBytes: Int) {
        self.dictionarySize = dictionarySize
        self.maximumSampleBytes = maximumSampleBytes
    }

    var sampleCount: Int { sizes.count }

    /// Keeps `payload` as a sample; once the buffer is full the oldest half is dropped.
    mutating func add(_ payload: [UInt8]) {
        guard !payload.isEmpty, payload.count < maximumSampleBytes / 4 else { return }
        if samples.count + payload.count > maximumSampleBytes {
            let dropCount = sizes.count / 2
            let dropBytes = sizes[0..<dropCount].reduce(0, +)
            samples.removeFirst(dropBytes)
            sizes.removeFirst(dropCount)
        }
        samples.append(contentsOf: payload)
        sizes.append(payload.count)
    }

    mutating func reset() {
        samples = []
        sizes = []
    }

    /// A trained dictionary, or nil when zstd finds the samples too few or too alike.
    func train() -> [UInt8]? {
        guard sizes.count >= 8 else { return nil }
        var dictionary = [UInt8](repeating: 0, count: dictionarySize)
        let sampleSizes = sizes.map { Int($0) }
        let written = dictionary.withUnsafeMutableBytes { out in
            samples.withUnsafeBytes { input in
                sampleSizes.withUnsafeBufferPointer { lengths in
                    ZDICT_trainFromBuffer(
                        out.baseAddress, out.count, input.baseAddress, lengths.baseAddress, UInt32(lengths.count))
                }
            }
        }
        guard ZDICT_isError(written) == 0, written > 0 else { return nil }
        return Array(dictionary[0..<written])
    }
}
