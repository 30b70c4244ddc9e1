import Foundation
import LedgerStore
import Synchronization
import Testing

/// `BoundedPipeline`, the one hand-off under the import's decoding, the scans and dictionary training.
@Suite("A bounded pipeline between two threads")
struct BoundedPipelineTests {
    struct Refusal: Error, Equatable {
        let item: Int
    }

    /// Takes every item until the end, or the error that ended the pipeline.
    private func drain<Item>(_ pipeline: BoundedPipeline<Item>) -> (items: [Item], error: (any Error)?) {
        var items: [Item] = []
        do {
            while let item = try pipeline.next() { items.append(item) }
            return (items, nil)
        } catch {
            return (items, error)
        }
    }

    /// Waits up to 10 s for `condition`, polling.
    private func eventually(_ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while !condition() {
            if Date() > deadline { return false }
            Thread.sleep(forTimeInterval: 0.001)
        }
        return true
    }

    @Test("items reach the consumer in the order sent", arguments: [1, 3])
    func keepsOrder(capacity: Int) {
        let pipeline = BoundedPipeline<Int>(name: "test-order", capacity: capacity) { pipeline in
            for item in 0..<20_000 {
                guard pipeline.send(item) else { return }
            }
        }
        defer { pipeline.stop() }
        let (items, error) = drain(pipeline)
        #expect(error == nil)
        #expect(items == Array(0..<20_000))
    }

    @Test("an empty producer ends the pipeline at once, and the end is seen again on later calls")
    func emptyInput() throws {
        let pipeline = BoundedPipeline<Int>(name: "test-empty", capacity: 2) { _ in }
        defer { pipeline.stop() }
        #expect(try pipeline.next() == nil)
        #expect(try pipeline.next() == nil)
        #expect(pipeline.isReady)
    }

    @Test("a producer is never more than capacity + 1 items ahead of a slow consumer", arguments: [1, 2, 4])
    func boundsTheProducer(capacity: Int) throws {
        let made = Atomic<Int>(0)
        let pipeline = BoundedPipeline<Int>(name: "test-bound", capacity: capacity) { pipeline in
            for item in 0..<50 {
                made.add(1, ordering: .sequentiallyConsistent)
                guard pipeline.send(item) else { return }
            }
        }
        defer { pipeline.stop() }
        // It runs up to the bound while nobody takes anything, and no further.
        #expect(eventually { made.load(ordering: .sequentiallyConsistent) == capacity + 1 })
        Thread.sleep(forTimeInterval: 0.05)
        let madeNow = made.load(ordering: .sequentiallyConsistent)
        #expect(madeNow == capacity + 1)
        var taken = 0
        while let item = try pipeline.next() {
            #expect(item == taken)
            taken += 1
            Thread.sleep(forTimeInterval: 0.001)
            let madeNow = made.load(ordering: .sequentiallyConsistent)
            #expect(madeNow - taken <= capacity + 1)
        }
        #expect(taken == 50)
    }

    @Test("a producer's error reaches the consumer after every item sent before it, and ends the producer")
    func errorReachesConsumer() {
        let ended = Atomic<Bool>(false)
        let pipeline = BoundedPipeline<Int>(name: "test-error", capacity: 2) { pipeline in
            defer { ended.store(true, ordering: .sequentiallyConsistent) }
            for item in 0..<10 {
                if item == 6 { throw Refusal(item: item) }
                guard pipeline.send(item) else { return }
            }
        }
        let (items, error) = drain(pipeline)
        #expect(items == Array(0..<6))
        #expect(error as? Refusal == Refusal(item: 6))
        #expect(throws: Refusal(item: 6)) { try pipeline.next() }
        pipeline.stop()
        let endedNow = ended.load(ordering: .sequentiallyConsistent)
        #expect(endedNow)
    }

    @Test("a consumer that stops early wakes the producer blocked in send, and stop returns after its thread ended")
    func earlyStopJoinsTheProducer() throws {
        let refused = Atomic<Bool>(false)
        let ended = Atomic<Bool>(false)
        let pipeline = BoundedPipeline<Int>(name: "test-stop", capacity: 1) { pipeline in
            var item = 0
            while pipeline.send(item) { item += 1 }
            refused.store(true, ordering: .sequentiallyConsistent)
            // Slow to let go: a stop that did not wait would return before this.
            Thread.sleep(forTimeInterval: 0.1)
            ended.store(true, ordering: .sequentiallyConsistent)
        }
        #expect(try pipeline.next() == 0)
        #expect(try pipeline.next() == 1)
        pipeline.stop()
        let refusedNow = refused.load(ordering: .sequentiallyConsistent)
        #expect(refusedNow)
        let endedNow = ended.load(ordering: .sequentiallyConsistent)
        #expect(endedNow)
        #expect(try pipeline.next() == nil)
    }

    @Test("cancel does not wait for a producer busy elsewhere, whose later items are refused")
    func cancelDoesNotWait() throws {
        let release = Atomic<Bool>(false)
        let accepted = Atomic<Int>(-1)
        let pipeline = BoundedPipeline<Int>(name: "test-cancel", capacity: 2) { pipeline in
            pipeline.send(0)
            // Stands for a read blocked on an idle input.
            while !release.load(ordering: .sequentiallyConsistent) { Thread.sleep(forTimeInterval: 0.001) }
            accepted.store(pipeline.send(1) ? 1 : 0, ordering: .sequentiallyConsistent)
        }
        #expect(try pipeline.next() == 0)
        pipeline.cancel()
        #expect(try pipeline.next() == nil)
        release.store(true, ordering: .sequentiallyConsistent)
        pipeline.stop()
        let acceptedNow = accepted.load(ordering: .sequentiallyConsistent)
        #expect(acceptedNow == 0)
    }

    @Test("without a thread of its own it hands over between the caller's threads; close ends it after the items")
    func handOffWithoutThread() throws {
        let pipeline = BoundedPipeline<Int>(capacity: 2)
        #expect(!pipeline.isReady)
        #expect(pipeline.send(1))
        #expect(pipeline.send(2))
        pipeline.close(throwing: Refusal(item: 3))
        #expect(!pipeline.send(4))
        #expect(pipeline.isReady)
        #expect(try pipeline.next() == 1)
        #expect(try pipeline.next() == 2)
        #expect(throws: Refusal(item: 3)) { try pipeline.next() }
    }
}

