-- Per-activity facts that let the nightly job decide "no finding possible" from the row alone, and fold only
-- the activities that may have one (SPEC §5). All are order-insensitive folds of the activity's own stream.
ALTER TABLE activities ADD COLUMN facts_at INTEGER;            -- newest `at` of its own events (reconcile aside)
ALTER TABLE activities ADD COLUMN intended_at INTEGER;         -- (at, position) of the newest content it was sent:
ALTER TABLE activities ADD COLUMN intended_position INTEGER;   --   the request's, or an update's or end's
ALTER TABLE activities ADD COLUMN intended_hash BLOB;          -- SHA-256 of that content state's canonical JSON
ALTER TABLE activities ADD COLUMN requests INTEGER NOT NULL DEFAULT 0;
ALTER TABLE activities ADD COLUMN doubts INTEGER NOT NULL DEFAULT 0;  -- bits: 1 failed push, 2 observation,
                                                                      -- 4 content the device rejects itself,
                                                                      -- 8 a subscribe on its own stream
-- Existing files: refill every projection from the log when the ledger opens (it catches up from position 0).
-- stream_owners is primary data and stays.
DELETE FROM activities;
DELETE FROM tokens;
DELETE FROM channel_members;
DELETE FROM start_tokens;
DELETE FROM projection_positions WHERE name = 'activities';
