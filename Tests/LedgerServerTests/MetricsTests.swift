import Foundation
import LedgerServer
import Testing

@Suite("Metrics")
struct MetricsTests {
    @Test("metrics count appends, batch sizes, commit latency, verdicts and HTTP statuses")
    func prometheusText() async throws {
        let service = try TestService()
        try await service.test { client async throws in
            _ = try await client.post(
                "/v1/batches", key: service.ingest, #"{"events":[\#(Sample.request("R1")),\#(Sample.update("R1"))]}"#)
            _ = try await client.get("/v1/activities/R1/audit", key: service.read)
            _ = try await client.get("/v1/activities", key: nil)
            let text = try await client.get("/metrics", key: nil).text
            #expect(text.contains("ledger_appended_events_total 2"))
            #expect(text.contains("ledger_batch_size_count 1"))
            #expect(text.contains("ledger_commit_duration_seconds_bucket"))
            #expect(text.contains(#"ledger_verdicts_total{verdict="pending"} 1"#))
            #expect(text.contains(#"http_responses_total{method="GET",status="401"} 1"#))
        }
    }
}
