import Foundation

extension EventStore {
    /// `events` with their payloads compressed on the calling thread (see `PayloadPrecompressor`): the
    /// writer then stores those bytes unless its dictionary changed meanwhile.
    package func precompressed(_ events: [NewEvent]) -> [NewEvent] {
        precompressors.withHandle { precompressor in
            events.map { event in
                var event = event
                if event.precompressed == nil { event.precompressed = precompressor.compress(event.payload) }
                return event
            }
        }
    }

    /// A compressor for a thread that prepares batches ahead of the writer (an import's decoding thread):
    /// set `NewEvent.precompressed` with it and the writer skips compressing those payloads, unless its
    /// dictionary changed meanwhile.
    package func makePrecompressor() -> PayloadPrecompressor {
        PayloadPrecompressor(board: writer.board, level: configuration.compressionLevel)
    }
}
