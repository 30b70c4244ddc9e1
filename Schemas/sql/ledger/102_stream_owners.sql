-- Which app owns each stream (the app of the API key that first wrote it). This is primary data, not a
-- projection: the log itself does not name apps, so `rebuild` keeps this table and `replay` copies it.
CREATE TABLE stream_owners (
    stream TEXT PRIMARY KEY NOT NULL,
    app TEXT NOT NULL
) WITHOUT ROWID;
