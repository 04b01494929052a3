#!/usr/bin/env python3
"""Fills a Retsu data directory's queue with N stored 1 KiB messages, for
measuring the restart load (BENCHMARKS.md, "Restart of 1,000,000 messages").

    retsu --data-dir DIR &  (create queue QUEUE, then stop retsu)
    scripts/bench/fill_data_dir.py DIR QUEUE 1000000

Writes rows as the journal does (see src/journal/sqlite/), straight into SQLite:
faster than a million SendMessage calls, and the load reads the same rows.
"""
import hashlib, json, os, sqlite3, sys, time, uuid

def main():
    directory, queue, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    db = sqlite3.connect(os.path.join(directory, "retsu.sqlite3"))
    uid = None
    for (u, record) in db.execute("SELECT uid, record FROM queues"):
        if json.loads(record)["name"] == queue:
            uid = u
    if uid is None:
        sys.exit(f"no queue {queue} in {directory}")
    now = int(time.time() * 1000)
    body_base = "x" * 1000
    db.execute("BEGIN")
    rows = []
    for slot in range(1, count + 1):
        body = f"{slot:016d}-{body_base}"[:1024]
        rows.append((uid, slot, uuid.uuid4().bytes, body, hashlib.md5(body.encode()).digest(),
                     None, None, "000000000000", now, now, None, 0, None, None, None, None,
                     0, 0, 0, 0, now, slot))
        if len(rows) == 10000:
            db.executemany("INSERT INTO messages VALUES (" + ",".join("?" * 22) + ")", rows)
            rows = []
    if rows:
        db.executemany("INSERT INTO messages VALUES (" + ",".join("?" * 22) + ")", rows)
    db.execute("INSERT OR REPLACE INTO counters VALUES (?, ?, ?, '0')", (uid, count + 1, 1))
    db.commit()
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()

main()
