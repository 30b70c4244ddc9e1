-- The event log on PostgreSQL (SPEC §6 "Scale-out"): one row per event, the same logical fields and chain hash
-- as the SQLite file, so `digest` is the same on both for the same events.
CREATE TABLE events (
    position bigint PRIMARY KEY,            -- gapless from 1
    stream text COLLATE "C" NOT NULL,       -- app-qualified name (app, U+001F, name; bare in the app-less namespace)
    version bigint NOT NULL,                -- 1, 2, … per stream
    id text COLLATE "C" NOT NULL UNIQUE,    -- app-qualified event id (byte order: no locale rules in its index)
    type text NOT NULL,
    at bigint NOT NULL,                     -- event time, Unix ms
    recorded_at bigint NOT NULL,            -- Unix ms
    payload bytea NOT NULL,                 -- the event's JSON as sent (TOAST compresses large ones)
    hash bytea NOT NULL,                    -- SHA-256 chain hash (Schemas/sql/README.md), 32 bytes
    UNIQUE (stream, version)
);

-- The tail of the chain, one row. Every append locks it (SELECT … FOR UPDATE) for its transaction: appends of
-- every process on the database take positions one after the other, so positions stay gapless and the chain
-- stays linear.
CREATE TABLE log_head (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    position bigint NOT NULL,
    hash bytea NOT NULL,
    namespaced_from bigint NOT NULL DEFAULT 0  -- as store_counters.namespaced_from of a SQLite file it was copied from
);
INSERT INTO log_head (position, hash) VALUES (0, '\x0000000000000000000000000000000000000000000000000000000000000000');
