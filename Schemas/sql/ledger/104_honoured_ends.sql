-- ended_at, ended_by, end_policy and end_policy_date now come from the earliest end the device acts on, as in
-- the fold: an end with content over 4096 bytes or a timestamp more than 8 h after its `at` is recorded and
-- flagged but ends nothing, so it no longer marks the activity ended (the nightly job skips ended rows).
-- Existing files: refill every projection from the log when the ledger opens (it catches up from position 0).
-- stream_owners is primary data and stays.
DELETE FROM activities;
DELETE FROM tokens;
DELETE FROM channel_members;
DELETE FROM start_tokens;
DELETE FROM projection_positions WHERE name = 'activities';
