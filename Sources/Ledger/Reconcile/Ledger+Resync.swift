import ActivityModel
import Foundation
import LedgerStore
import Logging

extension Ledger {
    /// SPEC §5 foreground resync: the plan for an installation's snapshot, evaluated as of the snapshot's `at`,
    /// recorded in the ledger.
    ///
    /// Folds every activity of the installation (projection `activities.installation`) and every activity in the
    /// snapshot as of `snapshot.at`, lets `ResyncPlanner` decide, then appends, at `snapshot.at`:
    /// - one `observe` event (`source: device`) per snapshot entry, on the activity's stream — what was seen;
    /// - one `reconcile` event (`source: ledger`, run `resync:<installation>:<at>`) per planned action, `none`
    ///   included — what was decided.
    ///
    /// Event ids are derived from the run, activity and kind, and the fold leaves this run's own events out, so
    /// re-sending the same snapshot appends nothing and returns the same plan. A different snapshot for the same
    /// installation and `at` is refused as a conflict.
    ///
    /// Adopted activities (the device has one the ledger never saw) get the `observe` and the `reconcile(adopt)`
    /// on their stream, but no invented `request`: their attributes and content are unknown, so `state` keeps
    /// answering "no such activity" until the app reports the request.
    ///
    /// - Parameter app: the namespace (nil: the app-less one); only its activities are considered and written.
    public func resync(snapshot: DeviceSnapshot, app: String? = nil) async throws -> ResyncPlan {
        let run = ReconcileIDs.resyncRun(snapshot)
        let plan = try await plan(snapshot: snapshot, run: run, app: app)
        var events: [LedgerEvent] = []
        var observed: Set<String> = []
        for entry in snapshot.activities where observed.insert(entry.activity).inserted {
            events.append(
                LedgerEvent(
                    id: ReconcileIDs.id(run: run, activity: entry.activity, kind: "observe"),
                    stream: .activity(entry.activity), at: snapshot.at, source: .device,
                    data: .observe(
                        ObserveData(
                            activityState: entry.activityState, contentTimestamp: entry.contentTimestamp,
                            contentHash: entry.contentHash))))
        }
        for action in plan.actions {
            events.append(
                LedgerEvent(
                    id: ReconcileIDs.id(run: run, activity: action.activity, kind: "reconcile"),
                    stream: .activity(action.activity), at: snapshot.at, source: .ledger,
                    data: .reconcile(ReconcileData(run: run, action: action.action, reason: action.reason))))
        }
        let outcomes: [AppendOutcome]
        do {
            outcomes = try await append(events, app: app)
        } catch let error as LedgerError where error.code == .conflict {
            // The derived ids of this run are already stored with other content: say so in the caller's terms
            // rather than naming an internal event id.
            throw LedgerError(
                .conflict,
                "a different snapshot was already recorded for installation \(snapshot.installation) at "
                    + "\(snapshot.at.rfc3339) (run \(run)); re-send that snapshot, or report this one with its own time",
                field: "at")
        }
        logger.info(
            "resync planned",
            metadata: [
                "ledger.reconcile.run": "\(run)", "ledger.reconcile.actions": "\(plan.actions.count)",
                "ledger.reconcile.appended": "\(outcomes.filter { !$0.duplicate }.count)",
            ])
        return plan
    }

    /// The plan without recording it (the fold leaves out events this run already recorded).
    func plan(snapshot: DeviceSnapshot, run: String, app: String?) async throws -> ResyncPlan {
        let own = Set(
            snapshot.activities.flatMap { entry in
                ["observe", "reconcile"].map { ReconcileIDs.id(run: run, activity: entry.activity, kind: $0) }
            })
        let states: [ActivityState] = try await read { db in
            var ids = try self.installationActivities(db, installation: snapshot.installation, app: app)
            ids += snapshot.activities.map(\.activity)
            var seen: Set<String> = []
            var states: [ActivityState] = []
            for id in ids where seen.insert(id).inserted {
                let ownIDs = own.union([ReconcileIDs.id(run: run, activity: id, kind: "reconcile")])
                let events = try self.relevantEvents(db, key: Self.key(id, app: app), hashes: false).map(\.positioned).filter {
                    !ownIDs.contains($0.event.id ?? "")
                }
                // No request by `at`: the ledger never saw it (yet) — the planner adopts it.
                guard let state = try? ActivityFold.state(activity: id, events: events, asOf: snapshot.at) else {
                    continue
                }
                states.append(state)
            }
            return states
        }
        return ResyncPlanner.plan(snapshot: snapshot, ledger: states, now: snapshot.at)
    }

    /// The installation's activities in `app`'s namespace (projection rows hold qualified names), as bare ids.
    private func installationActivities(_ db: any LedgerSnapshot, installation: String, app: String?) throws -> [String] {
        try db.activities(ofInstallation: Self.key(installation, app: app)).map(Namespaced.name)
    }
}
