import Foundation
import Synchronization

/// A one-line progress indicator on stderr, redrawn at most a few times a second; silent when stderr is
/// not a terminal unless the run is long, so logs and pipes stay readable. Sendable because the rebuild reports
/// from the database writer's thread.
final class Progress: Sendable {
    private struct State {
        var lastDraw = Date.distantPast
        var drew = false
    }

    private let label: String
    private let interactive = isatty(STDERR_FILENO) != 0
    private let started = Date()
    private let state = Mutex(State())

    init(_ label: String) { self.label = label }

    /// Reports `done` of `total` (total 0 = unknown).
    func update(_ done: Int64, of total: Int64, unit: String = "") {
        let now = Date()
        let interval: TimeInterval = interactive ? 0.25 : 5
        let draw = state.withLock { state in
            guard now.timeIntervalSince(state.lastDraw) >= interval, now.timeIntervalSince(started) >= 0.5 else {
                return false
            }
            state.lastDraw = now
            state.drew = true
            return true
        }
        guard draw else { return }
        let percent = total > 0 ? String(format: " (%.0f%%)", Double(done) * 100 / Double(total)) : ""
        let text = "\(label): \(done)\(total > 0 ? " of \(total)" : "")\(unit)\(percent)"
        write(interactive ? "\r\(text)\u{1B}[K" : "\(text)\n")
    }

    /// Clears the line so the final output starts clean.
    func finish() {
        if state.withLock({ $0.drew }) && interactive { write("\r\u{1B}[K") }
    }

    private func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
