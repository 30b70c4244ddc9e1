import ArgumentParser
import CZstd
import Foundation
import LedgerTesting

/// Times zstd's APIs on corpus payloads, to pick the cheapest per-row call.
struct ZstdProbe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "zstd-probe", shouldDisplay: false)

    func run() async throws {
        let payloads = CorpusGenerator(seed: 1, activities: 400, eventsPerActivity: 25).map(\.payload)
        var out = [UInt8](repeating: 0, count: 1 << 16)
        let cctx = ZSTD_createCCtx()!
        _ = ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 3)
        func time(_ name: String, _ body: ([UInt8]) -> Int) {
            let start = DispatchTime.now().uptimeNanoseconds
            var total = 0
            for payload in payloads { total += body(payload) }
            let ns = Double(DispatchTime.now().uptimeNanoseconds - start) / Double(payloads.count)
            print("\(name): \(Int(ns)) ns/payload, \(total / payloads.count) bytes")
        }
        time("compress2 no dict") { p in
            out.withUnsafeMutableBytes { o in p.withUnsafeBytes { i in ZSTD_compress2(cctx, o.baseAddress, o.count, i.baseAddress, i.count) } }
        }
        time("compressCCtx no dict") { p in
            out.withUnsafeMutableBytes { o in p.withUnsafeBytes { i in ZSTD_compressCCtx(cctx, o.baseAddress, o.count, i.baseAddress, i.count, 3) } }
        }
        var samples: [UInt8] = []
        var sizes: [Int] = []
        for p in payloads { samples += p; sizes.append(p.count) }
        var dict = [UInt8](repeating: 0, count: 65536)
        let t0 = DispatchTime.now().uptimeNanoseconds
        let n = dict.withUnsafeMutableBytes { d in samples.withUnsafeBytes { s in sizes.withUnsafeBufferPointer { z in
            ZDICT_trainFromBuffer(d.baseAddress, d.count, s.baseAddress, z.baseAddress, UInt32(z.count)) } } }
        print("train: \((DispatchTime.now().uptimeNanoseconds - t0) / 1_000_000) ms, \(n) bytes")
        let cdict = dict.withUnsafeBytes { ZSTD_createCDict($0.baseAddress, n, 3) }!
        time("compress_usingCDict") { p in
            out.withUnsafeMutableBytes { o in p.withUnsafeBytes { i in ZSTD_compress_usingCDict(cctx, o.baseAddress, o.count, i.baseAddress, i.count, cdict) } }
        }
        _ = ZSTD_CCtx_refCDict(cctx, cdict)
        time("compress2 refCDict") { p in
            out.withUnsafeMutableBytes { o in p.withUnsafeBytes { i in ZSTD_compress2(cctx, o.baseAddress, o.count, i.baseAddress, i.count) } }
        }
    }
}
