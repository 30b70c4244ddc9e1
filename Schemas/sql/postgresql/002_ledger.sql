-- The Ledger target's own tables on PostgreSQL: the projections (as Schemas/sql/ledger/101…105 leave them in a
-- SQLite file), the API keys and the nightly runs. Projections are updated in the same transaction as the append
-- that caused them, under the lock on log_head. Times are Unix milliseconds, content timestamps Unix seconds.
-- Every name column is COLLATE "C": ORDER BY and key ranges (an app's keys are `app` U+001F … `app` U+0020) go by
-- bytes, as in SQLite, with no locale rules.

-- One row per activity: what lists and filters need without folding the log (columns of SummaryRow.columns).
CREATE TABLE activities (
    activity text COLLATE "C" PRIMARY KEY,  -- the stream id after "activity:", qualified by its app
    attributes_type text COLLATE "C",
    installation text COLLATE "C",
    push_type text COLLATE "C",             -- none | token | channel
    channel text COLLATE "C",
    origin text COLLATE "C",
    requested_at bigint,                    -- `at` of the earliest request
    start_at bigint,                        -- scheduledStart, else requested_at
    token text COLLATE "C",                 -- newest token (by at, then position), even when dead
    token_at bigint,
    token_position bigint,
    ended_at bigint,                        -- earliest end the device acts on (event time)
    ended_by text COLLATE "C",              -- app | server
    end_policy text COLLATE "C",            -- default | immediate | after
    end_policy_date bigint,                 -- for after(date)
    dismissed_at bigint,                    -- earliest recorded dismiss
    dismissed_by text COLLATE "C",          -- user | system
    content_timestamp bigint,               -- newest content timestamp recorded on the activity's stream
    stale_at bigint,                        -- staleDate of that content
    events bigint NOT NULL DEFAULT 0,       -- events on the activity's stream
    first_position bigint,
    last_position bigint,
    last_at bigint,
    facts_at bigint,                        -- nightly facts (103_nightly_facts.sql): newest `at` of its own events
    intended_at bigint,                     -- (at, position) of the newest content it was sent
    intended_position bigint,
    intended_hash bytea,                    -- SHA-256 of that content state's canonical JSON
    requests bigint NOT NULL DEFAULT 0,
    doubts bigint NOT NULL DEFAULT 0        -- bits: 1 failed push, 2 observation, 4 unsendable, 8 own subscribe
);
CREATE INDEX activities_by_installation ON activities (installation) WHERE installation IS NOT NULL;
CREATE INDEX activities_by_attributes_type ON activities (attributes_type);
CREATE INDEX activities_by_token ON activities (token) WHERE token IS NOT NULL;

-- Every token ever seen on an activity: resolves an APNs 410 to its activity.
CREATE TABLE tokens (
    token text COLLATE "C" PRIMARY KEY,
    activity text COLLATE "C" NOT NULL,
    first_at bigint NOT NULL,
    dead_at bigint                          -- from a 410: its apnsTimestamp, else the push's at
);

-- Which activities listen to which broadcast channel, from when.
CREATE TABLE channel_members (
    channel text COLLATE "C" NOT NULL,
    activity text COLLATE "C" NOT NULL,
    since bigint NOT NULL,
    PRIMARY KEY (channel, activity)
);
CREATE INDEX channel_members_by_activity ON channel_members (activity);

-- Push-to-start tokens per installation (they rotate; every one is kept).
CREATE TABLE start_tokens (
    installation text COLLATE "C" NOT NULL,
    token text COLLATE "C" NOT NULL,
    at bigint NOT NULL,
    PRIMARY KEY (installation, token)
);

-- The position up to which each projection has applied the log; saved with its rows.
CREATE TABLE projection_positions (
    name text COLLATE "C" PRIMARY KEY,
    position bigint NOT NULL
);

-- API keys, stored as SHA-256 hashes of their secrets (APIKeyStore).
CREATE TABLE api_keys (
    id text COLLATE "C" PRIMARY KEY,        -- hex of the hash's first 6 bytes
    hash bytea NOT NULL UNIQUE,
    app text COLLATE "C" NOT NULL,
    scopes text NOT NULL,
    created_at double precision NOT NULL,   -- Unix seconds
    revoked_at double precision             -- Unix seconds; NULL while live
);
CREATE INDEX api_keys_on_app ON api_keys (app);

-- Nightly reconciliation runs: the report of each run id, written after its reconcile events.
CREATE TABLE reconcile_runs (
    run text COLLATE "C" PRIMARY KEY,       -- ReconcileRuns.key: `app/run`, bare in the app-less namespace
    at bigint NOT NULL,                     -- the run's time (Unix ms)
    recorded_at bigint NOT NULL,            -- when it was recorded (Unix ms)
    report text NOT NULL                    -- the report JSON (status recorded)
);
