import CZstd

/// One zstd frame of a whole value, without a dictionary and with zstd's checksum: for large values written once
/// and read whole beside the log, such as a nightly run's stored report (`reconcile_runs.report`: ~17 MB of JSON
/// for 60,000 findings, ~0.35 MB as a frame). Payloads and sealed blocks have their own frames, with the store's
/// dictionaries and without checksums (the chain hashes them).
package enum ZstdFrame {
    /// The frame of `bytes` at `level` (1: zstd's fastest, which compressed a nightly report as well as level 3
    /// did, in a third of the time).
    package static func compress(_ bytes: [UInt8], level: Int32 = 1) -> [UInt8] {
        let context = CompressionContext()
        _ = ZSTD_CCtx_setParameter(context.pointer, ZSTD_c_compressionLevel, level)
        _ = ZSTD_CCtx_setParameter(context.pointer, ZSTD_c_checksumFlag, 1)
        // Streamed through a small buffer: `CompressionContext.compress` would first allocate the whole bound (a
        // report of a million findings is ~250 MB of text, its frame ~6 MB). The pledged size puts the content
        // size in the frame's header, as in every other frame of the store.
        _ = ZSTD_CCtx_setPledgedSrcSize(context.pointer, UInt64(bytes.count))
        var frame: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 17)
        bytes.withUnsafeBytes { source in
            var input = ZSTD_inBuffer(src: source.baseAddress, size: source.count, pos: 0)
            var remaining = 0
            repeat {
                let written = chunk.withUnsafeMutableBytes { out in
                    var output = ZSTD_outBuffer(dst: out.baseAddress, size: out.count, pos: 0)
                    remaining = ZSTD_compressStream2(context.pointer, &output, &input, ZSTD_e_end)
                    return output.pos
                }
                // Only an allocation failure makes zstd fail here (the pledged size is the input's).
                if let name = zstdErrorName(remaining) {
                    fatalError("zstd could not compress \(bytes.count) bytes: \(name)")
                }
                frame += chunk[0..<written]
            } while remaining != 0
        }
        return frame
    }

    /// The bytes of a frame `compress` wrote; throws `StoreError.corruptPayload` for bytes that are not one whole
    /// frame (cut short, altered: the checksum no longer matches) or that claim more than 2 GiB.
    package static func decompress(_ frame: UnsafeRawBufferPointer) throws -> [UInt8] {
        try PayloadDecoder().decompress(frame, using: nil)
    }
}
