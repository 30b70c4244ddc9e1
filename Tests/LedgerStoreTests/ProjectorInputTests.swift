import GRDB
import LedgerStore
import Synchronization
import Testing

/// Records which input came with which written row.
final class InputRecorder: InlineProjector {
    let seen = Mutex<[(id: String, input: String?)]>([])

    func apply(_ events: ArraySlice<RecordedEvent>, inputs: [ProjectorInput], db: Database) throws {
        seen.withLock { seen in
            if inputs.count != events.count { seen.append(("inputs do not match events", nil)) }
            for (event, input) in zip(events, inputs) { seen.append((event.id, input.value as? String)) }
        }
    }

    func take() -> [String] {
        seen.withLock { seen in
            defer { seen = [] }
            return seen.map { "\($0.id)=\($0.input ?? "nil")" }
        }
    }
}

@Suite("Projector inputs")
struct ProjectorInputTests {
    static func attached(_ id: String, _ input: String?) -> NewEvent {
        var new = event("s", id: id)
        new.projectorInput = ProjectorInput(input)
        return new
    }

    @Test("each written row reaches the projector with the input attached to its event; duplicates bring none")
    func inputsFollowTheirRows() async throws {
        let recorder = InputRecorder()
        var configuration = StoreFixture.fastConfiguration
        configuration.projector = recorder
        let fixture = try StoreFixture(configuration: configuration)
        _ = try await fixture.store.append(AppendBatch(events: [Self.attached("a", "A"), Self.attached("b", nil)]))
        #expect(recorder.take() == ["a=A", "b=nil"])
        // `a` again (same content, another input): stored already, so only `c` is written and projected.
        let result = try await fixture.store.append(
            AppendBatch(events: [Self.attached("a", "A2"), Self.attached("c", "C")]))
        #expect(result.duplicate == [true, false])
        #expect(recorder.take() == ["c=C"])
    }

    @Test("a refused batch projects nothing and leaves nothing for the next one")
    func refusedBatchLeavesNothing() async throws {
        let recorder = InputRecorder()
        var configuration = StoreFixture.fastConfiguration
        configuration.projector = recorder
        let fixture = try StoreFixture(configuration: configuration)
        _ = try await fixture.store.append(AppendBatch(events: [Self.attached("a", "A")]))
        _ = recorder.take()
        var conflicting = Self.attached("a", "A-other")
        conflicting.payload = Array(#"{"n":2}"#.utf8)
        await #expect(throws: StoreError.self) {
            try await fixture.store.append(AppendBatch(events: [Self.attached("d", "D"), conflicting]))
        }
        _ = try await fixture.store.append(AppendBatch(events: [Self.attached("d", nil)]))
        #expect(recorder.take() == ["d=nil"])
    }

    @Test("an input is not part of the event: events differing only in it are equal")
    func inputIsNotIdentity() {
        #expect(Self.attached("a", "A") == Self.attached("a", "B"))
        #expect(Self.attached("a", "A") == Self.attached("a", nil))
    }
}
