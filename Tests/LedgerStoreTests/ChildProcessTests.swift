import Foundation
import LedgerTesting
import Testing

/// The launcher every process test uses (`ChildProcess`, `CommandRunner`), under the conditions that crashed
/// Foundation's `Process.run()`: many descriptors open, launches from several threads at once.
@Suite("Child processes")
struct ChildProcessTests {
    private static let shell = URL(fileURLWithPath: "/bin/sh")

    @Test("with ~1,400 descriptors open, children started from four threads at once inherit none of them")
    func manyDescriptors() async throws {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        let count = min(1_400, Int(limit.rlim_cur) - 300)
        let held = (0..<count).map { _ in open("/dev/null", O_RDONLY) }
        defer { for descriptor in held where descriptor >= 0 { close(descriptor) } }
        #expect(held.allSatisfy { $0 >= 0 })

        let runner = CommandRunner(executable: Self.shell)
        let listings = try await withThrowingTaskGroup(of: [String].self) { group in
            for _ in 0..<4 {
                group.addTask {
                    try await offThePool {
                        try (0..<10).map { _ in try runner.run(["-c", "ls /proc/self/fd"]).stdout }
                    }
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(listings.count == 40)
        for listing in listings {
            // 0–2, and the descriptor `ls` opened to read the folder.
            let inherited = listing.split(separator: "\n").compactMap { Int($0) }.filter { $0 > 3 }
            #expect(inherited.isEmpty, "a child inherited \(inherited.count) descriptors: \(inherited.prefix(5))")
        }
    }

    @Test("exit statuses and signals are told apart; stdin is fed; both pipes are drained at once")
    func statusAndStreams() throws {
        let runner = CommandRunner(executable: Self.shell)
        #expect(try runner.run(["-c", "exit 7"]).status == 7)
        let signaled = try ChildProcess(Self.shell, ["-c", "kill -9 $$"])
        #expect(signaled.waitUntilExit() == .signaled(SIGKILL))
        #expect(try runner.run(["-c", "tr a-z A-Z"], input: "hello\n").stdout == "HELLO\n")
        // 200 kB to stderr before anything to stdout: a reader that drained stdout first would wait forever.
        let chatty = try runner.run([
            "-c", "head -c 200000 /dev/zero | tr '\\000' e >&2; head -c 200000 /dev/zero | tr '\\000' o",
        ])
        #expect(chatty.status == 0)
        #expect(chatty.stderr.utf8.count == 200_000 && chatty.stdout.utf8.count == 200_000)
    }

    @Test("a signal after the child was collected goes nowhere; isRunning and waitUntilExit agree")
    func collectedOnce() throws {
        let child = try ChildProcess(Self.shell, ["-c", "sleep 30"])
        #expect(child.isRunning)
        child.terminate()
        #expect(child.waitUntilExit() == .signaled(SIGTERM))
        #expect(!child.isRunning)
        child.signal(SIGKILL)
        #expect(child.termination == .signaled(SIGTERM))
    }
}
