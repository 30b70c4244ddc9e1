-- 002_sealed_segments: older ranges of the log sealed into compressed segments.
-- Layout, check values and the sealing transaction are described in Schemas/sql/README.md.

-- One row per segment: the positions first_position … last_position, which the sealing transaction deleted
-- from `events`. Its blocks are the rows first_block … first_block + blocks - 1 of segment_blocks.
CREATE TABLE segments (
    first_position INTEGER PRIMARY KEY,
    last_position INTEGER NOT NULL,
    first_block INTEGER NOT NULL,
    blocks INTEGER NOT NULL,
    dictionary INTEGER,
    previous_hash BLOB NOT NULL,
    last_hash BLOB NOT NULL,
    checks BLOB NOT NULL
);

-- One stream's consecutive events of one segment, as one zstd frame (dictionary: the segment's).
CREATE TABLE segment_blocks (
    id INTEGER PRIMARY KEY,
    segment INTEGER NOT NULL,
    stream INTEGER NOT NULL,
    first_version INTEGER NOT NULL,
    last_version INTEGER NOT NULL,
    min_at INTEGER NOT NULL,
    data BLOB NOT NULL
);
CREATE UNIQUE INDEX segment_blocks_by_stream_version ON segment_blocks(stream, first_version);

-- The ids of sealed events: key is 47 bits of SHA-256 of the id, block the segment_blocks row holding it.
CREATE TABLE sealed_ids (
    key INTEGER NOT NULL,
    block INTEGER NOT NULL,
    PRIMARY KEY (key, block)
) WITHOUT ROWID;

INSERT INTO store_counters(name, value) VALUES ('sealed_bytes', 0);
