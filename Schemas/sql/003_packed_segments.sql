-- 003_packed_segments: a segment's blocks stored back to back in one blob.
-- A block of one stream's events is ~2.7 KB; SQLite keeps a row of that size whole in a leaf page, so a 4 KiB
-- page held one block and a fifth of the sealed file was page tails (Schemas/sql/README.md, BENCHMARKS.md
-- session 30). One blob per segment lives in overflow pages, which SQLite fills completely.

-- A segment's blocks (first_block … first_block + blocks - 1 of segment_blocks), back to back.
CREATE TABLE segment_data (
    segment INTEGER PRIMARY KEY,
    data BLOB NOT NULL
);

-- Where a block's bytes start in its segment's segment_data blob, and how many there are. NULL in blocks sealed
-- before this migration, which keep their bytes in segment_blocks.data; blocks sealed since store X'' there.
ALTER TABLE segment_blocks ADD COLUMN data_offset INTEGER;
ALTER TABLE segment_blocks ADD COLUMN data_length INTEGER;
