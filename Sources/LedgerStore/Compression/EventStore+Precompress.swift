import Foundation
import GRDB

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

    /// Whether an import starting now with `sealing` would seal as it goes (`ImportSealer`): its payloads then
    /// need no row frames, and an importer compresses none ahead. Only a hint (another process may append first):
    /// the import transaction decides again, and the writer compresses whatever reaches a row uncompressed. Asked
    /// on the writer's connection: a reader opened for it kept the last close from removing the WAL.
    package func importWouldSeal(sealing: Bool) async -> Bool {
        guard sealing, !configuration.readOnly else { return false }
        let rows = try? await pool.writeWithoutTransaction { db in try Self.hasRows(db) }
        return rows == false
    }
}
