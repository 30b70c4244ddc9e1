#!/usr/bin/env python3
"""Probe of the design named in session 24: rows in tables per range of positions.

Compares, on plain SQLite (WAL, synchronous=FULL, 4 KiB pages, autocheckpoint off while measuring):
  A. one `events` table of N rows with a unique random-id index and a (stream, version) index (today's shape);
  B. the same N rows split into ranges of R rows, the newest range receiving the appends.
For each: WAL frames and milliseconds per group commit of G events (random 16-byte ids, interleaved streams),
and what retiring 4,096 rows costs (A: deleting them 256 per transaction, filing their ids in `sealed_ids`; B: DROP
TABLE of a whole range, per 4,096 rows of it, and filing 4,096 ids). Not the ledger's code: a model of its indexes,
to size the lift before building it (BENCHMARKS.md, session 24).

Usage: python3 Tools/range-probe.py [N] [DIR]   (N rows, default 1,000,000; files in DIR, default /tmp/range-probe)
"""
import os, random, sqlite3, sys, time

N = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
R = 65_536
G = 700
STREAMS = 10_000
PAYLOAD = os.urandom(120)
DIR = sys.argv[2] if len(sys.argv) > 2 else "/tmp/range-probe"
os.makedirs(DIR, exist_ok=True)
rng = random.Random(24)
FRAME = 4096 + 24


def connect(path):
    for suffix in ("", "-wal", "-shm"):
        try:
            os.remove(path + suffix)
        except FileNotFoundError:
            pass
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA page_size = 4096")
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = FULL")
    db.execute("PRAGMA cache_size = -65536")
    return db


def table(db, name):
    db.execute(f"CREATE TABLE {name} (position INTEGER PRIMARY KEY, stream INTEGER NOT NULL, version INTEGER NOT NULL,"
               f" id BLOB NOT NULL, payload BLOB NOT NULL)")
    db.execute(f"CREATE UNIQUE INDEX {name}_id ON {name}(id)")
    db.execute(f"CREATE UNIQUE INDEX {name}_sv ON {name}(stream, version)")


versions = [0] * STREAMS


def rows(start, count):
    out = []
    for position in range(start, start + count):
        stream = rng.randrange(STREAMS)
        versions[stream] += 1
        out.append((position, stream, versions[stream], os.urandom(16), PAYLOAD))
    return out


def wal_frames(path):
    return os.path.getsize(path + "-wal") // FRAME


def commits(db, path, name, start, count, checks=()):
    """count group commits of G rows into `name`; each first looks the ids up in `checks` (other ranges)."""
    frames, seconds = [], []
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.execute("PRAGMA wal_autocheckpoint = 0")
    position = start
    for _ in range(count):
        batch = rows(position, G)
        position += G
        before = wal_frames(path)
        t = time.perf_counter()
        db.execute("BEGIN IMMEDIATE")
        for other in checks:
            for row in batch:
                db.execute(f"SELECT 1 FROM {other} WHERE id = ?", (row[3],)).fetchone()
        db.executemany(f"INSERT INTO {name} VALUES (?, ?, ?, ?, ?)", batch)
        db.execute("COMMIT")
        seconds.append(time.perf_counter() - t)
        frames.append(wal_frames(path) - before)
    db.execute("PRAGMA wal_autocheckpoint = 1000")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    frames.sort(); seconds.sort()
    return frames[len(frames) // 2], seconds[len(seconds) // 2] * 1000, position


def preload_sealed(db):
    """An older ledger's sealed ids: N keys already filed (the index every purge inserts into)."""
    db.execute("BEGIN")
    db.executemany("INSERT OR IGNORE INTO sealed_ids VALUES (?, ?)", ((rng.getrandbits(47), i // 64) for i in range(N)))
    db.execute("COMMIT")


def main():
    print(f"N={N} rows preloaded, ranges of R={R}, group commits of G={G}")
    # A: one table.
    path_a = DIR + "/a.sqlite"
    a = connect(path_a)
    table(a, "events")
    a.execute("CREATE TABLE sealed_ids (key INTEGER NOT NULL, block INTEGER NOT NULL, PRIMARY KEY (key, block)) WITHOUT ROWID")
    preload_sealed(a)
    versions[:] = [0] * STREAMS
    a.execute("BEGIN")
    for start in range(1, N + 1, 50_000):
        a.executemany("INSERT INTO events VALUES (?, ?, ?, ?, ?)", rows(start, min(50_000, N + 1 - start)))
    a.execute("COMMIT")
    a.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    f, ms, end = commits(a, path_a, "events", N + 1, 40)
    print(f"A one table:      {f:5d} WAL frames, {ms:6.2f} ms per commit of {G} ({f * FRAME / G / 1024:.2f} KiB/event)")
    # A: retire 4,096 of the oldest rows, 256 per transaction, filing a random key each into sealed_ids.
    a.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    a.execute("PRAGMA wal_autocheckpoint = 0")
    before = wal_frames(path_a)
    t = time.perf_counter()
    for first in range(1, 4097, 256):
        a.execute("BEGIN IMMEDIATE")
        a.executemany("INSERT INTO sealed_ids VALUES (?, ?)", [(rng.getrandbits(47), first) for _ in range(256)])
        a.execute("DELETE FROM events WHERE position BETWEEN ? AND ?", (first, first + 255))
        a.execute("COMMIT")
    retire_a = (wal_frames(path_a) - before, (time.perf_counter() - t) * 1000)
    print(f"A retire 4096:    {retire_a[0]:5d} WAL frames, {retire_a[1]:7.1f} ms (16 transactions of 256)")
    a.close()

    # B: ranges.
    path_b = DIR + "/b.sqlite"
    b = connect(path_b)
    b.execute("CREATE TABLE sealed_ids (key INTEGER NOT NULL, block INTEGER NOT NULL, PRIMARY KEY (key, block)) WITHOUT ROWID")
    preload_sealed(b)
    versions[:] = [0] * STREAMS
    ranges = []
    b.execute("BEGIN")
    position = 1
    while position <= N:
        name = f"events_{len(ranges)}"
        table(b, name)
        count = min(R, N + 1 - position)
        b.executemany(f"INSERT INTO {name} VALUES (?, ?, ?, ?, ?)", rows(position, count))
        ranges.append(name)
        position += count
    b.execute("COMMIT")
    # Appends go to a fresh range half full, checking ids against the two older live ranges.
    name = f"events_{len(ranges)}"
    table(b, name)
    b.executemany(f"INSERT INTO {name} VALUES (?, ?, ?, ?, ?)", rows(position, R // 2))
    position += R // 2
    f, ms, _ = commits(b, path_b, name, position, 40, checks=ranges[-2:])
    print(f"B ranges:         {f:5d} WAL frames, {ms:6.2f} ms per commit of {G} ({f * FRAME / G / 1024:.2f} KiB/event), ids checked in 2 older ranges")
    b.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    b.execute("PRAGMA wal_autocheckpoint = 0")
    before = wal_frames(path_b)
    t = time.perf_counter()
    b.execute("BEGIN IMMEDIATE")
    b.execute(f"DROP TABLE {ranges[0]}")
    b.execute("COMMIT")
    drop = (wal_frames(path_b) - before, (time.perf_counter() - t) * 1000)
    print(f"B drop {R}:   {drop[0]:5d} WAL frames, {drop[1]:7.1f} ms; per 4096 rows {drop[0] * 4096 / R:.0f} frames")
    before = wal_frames(path_b)
    t = time.perf_counter()
    b.execute("BEGIN IMMEDIATE")
    b.executemany("INSERT INTO sealed_ids VALUES (?, ?)", [(rng.getrandbits(47), 1) for _ in range(4096)])
    b.execute("COMMIT")
    filed = (wal_frames(path_b) - before, (time.perf_counter() - t) * 1000)
    print(f"B file 4096 ids:  {filed[0]:5d} WAL frames, {filed[1]:7.1f} ms (one transaction per segment)")
    b.close()


main()
