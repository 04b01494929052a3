//! `store-bench`: the measurement behind the persistence journal's choice
//! of embedded store (BENCHMARKS.md, "Persistence store").
//!
//! ```text
//! cargo run --release --manifest-path scripts/store-bench/Cargo.toml -- DIR [--messages 1000000]
//! ```
//!
//! It replays the journal's real write pattern on SQLite (rusqlite, WAL,
//! `synchronous=FULL`) and on redb (`Durability::Immediate`): group commits
//! of N message records (1 KiB body plus ~120 bytes of state), one fsync
//! per commit; then the same records' state updates (a receive) and
//! deletes; then the restart load: open a store holding `--messages`
//! records and read every one back into memory. DIR is emptied afterwards.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use redb::{ReadableDatabase, ReadableTable, TableDefinition};
use rusqlite::{params, Connection};

const TABLE: TableDefinition<(u64, u64), &[u8]> = TableDefinition::new("messages");
const STATE_LEN: usize = 120;
const BODY_LEN: usize = 1024;

fn body(i: u64) -> String {
    let mut s = format!("{i:016}");
    while s.len() < BODY_LEN {
        s.push('x');
    }
    s
}

fn state(i: u64) -> Vec<u8> {
    let mut v = i.to_le_bytes().repeat(STATE_LEN / 8);
    v.resize(STATE_LEN, 7);
    v
}

trait Store {
    fn name(&self) -> &'static str;
    /// One transaction inserting `records`, committed durably.
    fn insert(&mut self, first: u64, count: u64);
    /// One transaction rewriting the state of `records` (a receive).
    fn update(&mut self, first: u64, count: u64);
    fn delete(&mut self, first: u64, count: u64);
    /// Reopens and reads every record; returns how many.
    fn load(&mut self) -> u64;
}

struct Sqlite {
    dir: PathBuf,
    conn: Connection,
}

impl Sqlite {
    fn open(dir: &Path) -> Sqlite {
        let conn = Connection::open(dir.join("bench.sqlite3")).unwrap();
        conn.pragma_update(None, "journal_mode", "WAL").unwrap();
        conn.pragma_update(None, "synchronous", "FULL").unwrap();
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS messages (queue_uid INTEGER NOT NULL, slot INTEGER NOT NULL,
               body TEXT NOT NULL, state BLOB NOT NULL, PRIMARY KEY (queue_uid, slot))",
        )
        .unwrap();
        Sqlite {
            dir: dir.to_path_buf(),
            conn,
        }
    }
}

impl Store for Sqlite {
    fn name(&self) -> &'static str {
        "SQLite (rusqlite, WAL, synchronous=FULL)"
    }

    fn insert(&mut self, first: u64, count: u64) {
        let tx = self.conn.transaction().unwrap();
        {
            let mut st = tx
                .prepare_cached("INSERT INTO messages (queue_uid, slot, body, state) VALUES (1, ?1, ?2, ?3)")
                .unwrap();
            for i in first..first + count {
                st.execute(params![i as i64, body(i), state(i)]).unwrap();
            }
        }
        tx.commit().unwrap();
    }

    fn update(&mut self, first: u64, count: u64) {
        let tx = self.conn.transaction().unwrap();
        {
            let mut st = tx
                .prepare_cached("UPDATE messages SET state = ?2 WHERE queue_uid = 1 AND slot = ?1")
                .unwrap();
            for i in first..first + count {
                st.execute(params![i as i64, state(i + 1)]).unwrap();
            }
        }
        tx.commit().unwrap();
    }

    fn delete(&mut self, first: u64, count: u64) {
        let tx = self.conn.transaction().unwrap();
        {
            let mut st = tx
                .prepare_cached("DELETE FROM messages WHERE queue_uid = 1 AND slot = ?1")
                .unwrap();
            for i in first..first + count {
                st.execute(params![i as i64]).unwrap();
            }
        }
        tx.commit().unwrap();
    }

    fn load(&mut self) -> u64 {
        self.conn = Connection::open(self.dir.join("bench.sqlite3")).unwrap();
        let mut st = self
            .conn
            .prepare("SELECT queue_uid, slot, body, state FROM messages")
            .unwrap();
        let mut rows = st.query([]).unwrap();
        let mut kept = Vec::new();
        while let Some(r) = rows.next().unwrap() {
            let body: String = r.get(2).unwrap();
            let state: Vec<u8> = r.get(3).unwrap();
            kept.push((r.get::<_, i64>(1).unwrap(), body, state));
        }
        kept.len() as u64
    }
}

struct Redb {
    path: PathBuf,
    db: Option<redb::Database>,
}

impl Redb {
    fn open(dir: &Path) -> Redb {
        let path = dir.join("bench.redb");
        let db = redb::Database::create(&path).unwrap();
        Redb { path, db: Some(db) }
    }

    fn db(&self) -> &redb::Database {
        self.db.as_ref().unwrap()
    }
}

fn record(i: u64) -> Vec<u8> {
    let mut v = state(i);
    v.extend_from_slice(body(i).as_bytes());
    v
}

impl Store for Redb {
    fn name(&self) -> &'static str {
        "redb (Durability::Immediate)"
    }

    fn insert(&mut self, first: u64, count: u64) {
        let tx = self.db().begin_write().unwrap();
        {
            let mut t = tx.open_table(TABLE).unwrap();
            for i in first..first + count {
                t.insert((1, i), record(i).as_slice()).unwrap();
            }
        }
        tx.commit().unwrap();
    }

    fn update(&mut self, first: u64, count: u64) {
        // redb has no partial update: read, patch the state, write back.
        let tx = self.db().begin_write().unwrap();
        {
            let mut t = tx.open_table(TABLE).unwrap();
            for i in first..first + count {
                let mut v = t.get((1, i)).unwrap().unwrap().value().to_vec();
                v[..STATE_LEN].copy_from_slice(&state(i + 1));
                t.insert((1, i), v.as_slice()).unwrap();
            }
        }
        tx.commit().unwrap();
    }

    fn delete(&mut self, first: u64, count: u64) {
        let tx = self.db().begin_write().unwrap();
        {
            let mut t = tx.open_table(TABLE).unwrap();
            for i in first..first + count {
                t.remove((1, i)).unwrap();
            }
        }
        tx.commit().unwrap();
    }

    fn load(&mut self) -> u64 {
        self.db = None;
        self.db = Some(redb::Database::create(&self.path).unwrap());
        let tx = self.db().begin_read().unwrap();
        let t = tx.open_table(TABLE).unwrap();
        let mut kept = Vec::new();
        for entry in t.iter().unwrap() {
            let (k, v) = entry.unwrap();
            let v = v.value();
            let body = String::from_utf8(v[STATE_LEN..].to_vec()).unwrap();
            kept.push((k.value().1, body, v[..STATE_LEN].to_vec()));
        }
        kept.len() as u64
    }
}

fn rate(n: u64, d: Duration) -> f64 {
    n as f64 / d.as_secs_f64()
}

fn disk_use(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok()?.metadata().ok())
        .map(|m| m.len())
        .sum()
}

fn bench(store: &mut dyn Store, dir: &Path, messages: u64) {
    println!("## {}", store.name());
    let mut next = 0u64;
    for group in [1u64, 16, 64] {
        // Commits for about two seconds.
        let start = Instant::now();
        let first = next;
        let mut commits = 0;
        while start.elapsed() < Duration::from_secs(2) {
            store.insert(next, group);
            next += group;
            commits += 1;
        }
        let insert = start.elapsed();
        let count = next - first;
        let start = Instant::now();
        let mut i = first;
        while i < next {
            store.update(i, group);
            i += group;
        }
        let update = start.elapsed();
        let start = Instant::now();
        let mut i = first;
        while i < next {
            store.delete(i, group);
            i += group;
        }
        let delete = start.elapsed();
        println!(
            "group {group:>3}: {:>7.0} commits/s; records/s: insert {:>8.0}, update {:>8.0}, delete {:>8.0}",
            rate(commits, insert),
            rate(count, insert),
            rate(count, update),
            rate(count, delete),
        );
    }
    // The restart load: bulk-fill, then reopen and read everything.
    let start = Instant::now();
    let mut i = 0;
    while i < messages {
        let n = 10_000.min(messages - i);
        store.insert(1_000_000_000 + i, n);
        i += n;
    }
    let fill = start.elapsed();
    let bytes = disk_use(dir);
    let start = Instant::now();
    let loaded = store.load();
    let load = start.elapsed();
    assert_eq!(loaded, messages);
    println!(
        "load: {loaded} records in {:.2} s ({:.0}/s); fill took {:.1} s; disk {:.0} bytes per record",
        load.as_secs_f64(),
        rate(loaded, load),
        fill.as_secs_f64(),
        bytes as f64 / messages as f64
    );
}

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(args.next().expect("usage: store-bench DIR [--messages N]"));
    let mut messages = 1_000_000u64;
    while let Some(a) = args.next() {
        if a == "--messages" {
            messages = args.next().and_then(|v| v.parse().ok()).expect("--messages N");
        }
    }
    for which in ["sqlite", "redb"] {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        match which {
            "sqlite" => bench(&mut Sqlite::open(&dir), &dir, messages),
            _ => bench(&mut Redb::open(&dir), &dir, messages),
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
