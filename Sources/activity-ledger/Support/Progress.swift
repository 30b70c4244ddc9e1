import Foundation

/// A one-line progress indicator on stderr, redrawn at most a few times a second; silent when stderr is
/// not a terminal unless the run is long, so logs and pipes stay readable.
final class Progress {
    private let label: String
    private let interactive = isatty(STDERR_FILENO) != 0
    private var lastDraw = Date.distantPast
    private let started = Date()
    private var drew = false

    init(_ label: String) { self.label = label }

    /// Reports `done` of `total` (total 0 = unknown).
    func update(_ done: Int64, of total: Int64) {
        let now = Date()
        let interval: TimeInterval = interactive ? 0.25 : 5
        guard now.timeIntervalSince(lastDraw) >= interval, now.timeIntervalSince(started) >= 0.5 else { return }
        lastDraw = now
        let percent = total > 0 ? String(format: " (%.0f%%)", Double(done) * 100 / Double(total)) : ""
        let text = "\(label): \(done)\(total > 0 ? " of \(total)" : "")\(percent)"
        write(interactive ? "\r\(text)\u{1B}[K" : "\(text)\n")
        drew = true
    }

    /// Clears the line so the final output starts clean.
    func finish() {
        if drew && interactive { write("\r\u{1B}[K") }
    }

    private func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
