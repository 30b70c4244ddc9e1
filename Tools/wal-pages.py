#!/usr/bin/env python3
"""Which tables and indexes a ledger file's commits write: the frames of its write-ahead log, by B-tree.

Usage: Tools/wal-pages.py LEDGER.sqlite

Reads LEDGER.sqlite-wal as it is (copy the pair aside first when a server is writing: `cp F F.copy; cp F-wal
F.copy-wal`), takes the frames of its current cycle (those whose salts match the WAL header: older cycles' frames
stay in the file until overwritten), and counts them by the table or index each page belongs to (SQLite's
`dbstat`, read through a connection that sees the same WAL). Each frame is one whole page written by one commit,
so a B-tree whose entries land on random pages costs a page per entry whatever the entry's size.

Prints the frames, the commits and the frames per commit, then each B-tree's frames and share.
"""
import collections
import sqlite3
import struct
import sys


def frames(wal_path):
    """Page numbers of the WAL's current frames, in order, and how many of them end a commit."""
    with open(wal_path, "rb") as handle:
        data = handle.read()
    if len(data) < 32:
        return 0, [], 0
    _, _, page_size, _, salt1, salt2, _, _ = struct.unpack(">8I", data[:32])
    pages, commits, offset = [], 0, 32
    while offset + 24 + page_size <= len(data):
        page, database_size, frame_salt1, frame_salt2 = struct.unpack(">4I", data[offset:offset + 16])
        if (frame_salt1, frame_salt2) != (salt1, salt2):
            break
        pages.append(page)
        commits += 1 if database_size else 0
        offset += 24 + page_size
    return page_size, pages, commits


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: Tools/wal-pages.py LEDGER.sqlite")
    path = sys.argv[1]
    page_size, pages, commits = frames(path + "-wal")
    if not pages:
        sys.exit(f"{path}-wal: no frames in its current cycle")
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    owner = {page: name for name, page in connection.execute("SELECT name, pageno FROM dbstat")}
    counts = collections.Counter(owner.get(page, "(free or new)") for page in pages)
    print(f"{len(pages)} frames of {page_size} bytes in {commits} commits: {len(pages) / max(commits, 1):.1f} frames per commit")
    for name, count in counts.most_common():
        print(f"{count:8d} {100 * count / len(pages):5.1f} %  {name}")


if __name__ == "__main__":
    main()
