/// The SQL of `Schemas/sql/ledger/`, embedded (SwiftPM resources cannot reach outside the target).
enum ProjectionSQL {
    static let projections = #"""
        -- Projections of the Ledger target. Updated in the same transaction as the append that caused them,
        -- rebuildable from the log at any time (`activity-ledger rebuild`). Times are Unix milliseconds,
        -- content timestamps Unix seconds.
        
        -- One row per activity: what lists and filters need without folding the log.
        CREATE TABLE activities (
            activity TEXT PRIMARY KEY NOT NULL,    -- the id after "activity:"
            attributes_type TEXT,
            installation TEXT,
            push_type TEXT,                        -- none | token | channel
            channel TEXT,
            origin TEXT,
            requested_at INTEGER,                  -- `at` of the earliest request
            start_at INTEGER,                      -- scheduledStart, else requested_at
            token TEXT,                            -- newest token (by at, then position), even when dead
            token_at INTEGER,
            token_position INTEGER,
            ended_at INTEGER,                      -- earliest recorded end (event time)
            ended_by TEXT,                         -- app | server
            end_policy TEXT,                       -- default | immediate | after
            end_policy_date INTEGER,               -- for after(date)
            dismissed_at INTEGER,                  -- earliest recorded dismiss
            dismissed_by TEXT,                     -- user | system
            content_timestamp INTEGER,             -- newest content timestamp recorded on the activity's stream
            stale_at INTEGER,                      -- staleDate of that content
            events INTEGER NOT NULL DEFAULT 0,     -- events on the activity's stream
            first_position INTEGER,
            last_position INTEGER,
            last_at INTEGER
        ) WITHOUT ROWID;
        CREATE INDEX activities_by_installation ON activities(installation) WHERE installation IS NOT NULL;
        CREATE INDEX activities_by_attributes_type ON activities(attributes_type);
        CREATE INDEX activities_by_token ON activities(token) WHERE token IS NOT NULL;
        
        -- Every token ever seen on an activity: resolves an APNs 410 to its activity.
        CREATE TABLE tokens (
            token TEXT PRIMARY KEY NOT NULL,
            activity TEXT NOT NULL,
            first_at INTEGER NOT NULL,
            dead_at INTEGER                        -- from a 410: its apnsTimestamp, else the push's at
        ) WITHOUT ROWID;
        
        -- Which activities listen to which broadcast channel, from when.
        CREATE TABLE channel_members (
            channel TEXT NOT NULL,
            activity TEXT NOT NULL,
            since INTEGER NOT NULL,
            PRIMARY KEY (channel, activity)
        ) WITHOUT ROWID;
        CREATE INDEX channel_members_by_activity ON channel_members(activity);
        
        -- Push-to-start tokens per installation (they rotate; every one is kept).
        CREATE TABLE start_tokens (
            installation TEXT NOT NULL,
            token TEXT NOT NULL,
            at INTEGER NOT NULL,
            PRIMARY KEY (installation, token)
        ) WITHOUT ROWID;
        
        -- The position up to which each projection has applied the log; saved with its rows.
        CREATE TABLE projection_positions (
            name TEXT PRIMARY KEY NOT NULL,
            position INTEGER NOT NULL
        ) WITHOUT ROWID;
        """#

    static let streamOwners = #"""
        -- Which app owns each stream (the app of the API key that first wrote it). This is primary data, not a
        -- projection: the log itself does not name apps, so `rebuild` keeps this table and `replay` copies it.
        CREATE TABLE stream_owners (
            stream TEXT PRIMARY KEY NOT NULL,
            app TEXT NOT NULL
        ) WITHOUT ROWID;
        """#

    static let nightlyFacts = #"""
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
        """#

    static let honouredEnds = #"""
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
        """#

    static let appNamespaces = #"""
        -- Apps are namespaces (SPEC §2): a stream and an event id belong to one app. Before this migration, the code
        -- (`EventStore.moveToNamespaces`) stores every stream listed here, and the ids of its events, qualified by
        -- its app (app, U+001F, name) and sets store_counters.namespaced_from, so rows written before keep
        -- verifying against the hash of their bare names. Ownership is then part of each name, not a table.
        DROP TABLE stream_owners;
        -- Projection rows hold qualified names now: refill them from the log when the ledger opens.
        DELETE FROM activities;
        DELETE FROM tokens;
        DELETE FROM channel_members;
        DELETE FROM start_tokens;
        DELETE FROM projection_positions WHERE name = 'activities';
        """#
}
