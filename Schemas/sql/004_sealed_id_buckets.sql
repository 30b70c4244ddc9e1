-- 004_sealed_id_buckets: the ids of sealed events filed in 65,536 buckets instead of a B-tree entry each.
-- sealed_ids cost 15.4 B per sealed event (a 6-byte key, the block, a record header and a cell pointer each, pages
-- ~90 % full); a bucket row holds its entries back to back in one blob, ~5 B each (Schemas/sql/README.md,
-- BENCHMARKS.md session 38). sealed_ids keeps the ids filed before and takes no more.

-- bucket: the first 16 bits of SHA-256 of the id (qualified by its app, as appended). entries: one per id, back to
-- back: the next 15 bits of that hash (2 bytes, big-endian), then the segment_blocks row holding it (varint).
CREATE TABLE sealed_id_buckets (
    bucket INTEGER PRIMARY KEY,
    entries BLOB NOT NULL
);
