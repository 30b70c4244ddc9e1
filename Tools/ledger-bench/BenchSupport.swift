import Foundation

/// Wall-clock timing and process memory for benchmark reports.
enum Measure {
    /// The middle of `times` (of an odd count; the upper middle of an even one).
    static func median(_ times: [Double]) -> Double { times.sorted()[times.count / 2] }

    /// Each of `values` to two decimals, in order: `2.48 / 2.77 / 2.32` (the runs behind a median, or their ratios).
    static func list(_ values: [Double]) -> String {
        values.map { String(format: "%.2f", $0) }.joined(separator: " / ")
    }

    /// Seconds `body` took.
    static func seconds(_ body: () async throws -> Void) async rethrows -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try await body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    /// Peak resident set size in MiB (VmHWM of /proc/self/status), nil off Linux.
    static func peakRSSMiB() -> Double? { statusField("VmHWM:") }

    /// Current resident set size in MiB.
    static func currentRSSMiB() -> Double? { statusField("VmRSS:") }

    /// A `/proc/PID/status` field in MiB (`name` with its colon, e.g. "VmHWM:"), of this process or of `pid`.
    static func statusField(_ name: String, of pid: Int32? = nil) -> Double? {
        let path = "/proc/\(pid.map(String.init) ?? "self")/status"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(name) {
            let kib = line.split(separator: " ").compactMap { Double($0) }.first
            return kib.map { $0 / 1024 }
        }
        return nil
    }

    static func fileBytes(_ path: String) -> Int64 {
        var total: Int64 = 0
        for file in [path, path + "-wal", path + "-shm"] {
            if let size = (try? FileManager.default.attributesOfItem(atPath: file))?[.size] as? NSNumber {
                total += size.int64Value
            }
        }
        return total
    }

    static func removeDatabase(_ path: String) {
        for file in [path, path + "-wal", path + "-shm"] { try? FileManager.default.removeItem(atPath: file) }
    }

    static func rate(_ count: Int, _ seconds: Double) -> String {
        String(format: "%10.0f /s", Double(count) / max(seconds, 1e-9))
    }
}
