import Foundation
import LedgerStore
import Testing

@Suite("Draining the store")
struct DrainTests {
    @Test("appends racing a drain are each committed before it returns or refused as closed; nothing commits after")
    func drainRacesAppends() async throws {
        for round in 0..<5 {
            let fixture = try StoreFixture()
            let store = fixture.store
            let outcomes = await withTaskGroup(of: Bool?.self) { group in
                for index in 0..<200 {
                    group.addTask {
                        do {
                            _ = try await store.append(AppendBatch(events: [event("s-\(round)-\(index)")]))
                            return true
                        } catch let error as StoreError where error.code == .closed {
                            return false
                        } catch {
                            return nil
                        }
                    }
                }
                group.addTask {
                    try? await Task.sleep(for: .milliseconds(Int.random(in: 0...20)))
                    await store.drain()
                    // Whatever is in the log now is all there will ever be.
                    let atDrain = try? store.lastPosition()
                    try? await Task.sleep(for: .milliseconds(100))
                    #expect((try? store.lastPosition()) == atDrain, "an append committed after drain() returned")
                    return nil
                }
                var outcomes: [Bool?] = []
                for await outcome in group { outcomes.append(outcome) }
                return outcomes
            }
            let committed = outcomes.filter { $0 == true }.count
            let refused = outcomes.filter { $0 == false }.count
            #expect(committed + refused == 200, "an append failed other than as closed")
            #expect(try store.lastPosition() == Int64(committed))
            await #expect(throws: StoreError.self) { try await store.append(AppendBatch(events: [event("late")])) }
        }
    }
}
