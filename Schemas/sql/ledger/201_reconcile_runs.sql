-- Nightly reconciliation runs: the report of each run id, written after its reconcile events.
CREATE TABLE reconcile_runs (
    run TEXT PRIMARY KEY NOT NULL,
    at INTEGER NOT NULL,            -- the run's time (Unix ms)
    recorded_at INTEGER NOT NULL,   -- when it was recorded (Unix ms)
    report TEXT NOT NULL            -- the report JSON (status recorded)
) WITHOUT ROWID;
