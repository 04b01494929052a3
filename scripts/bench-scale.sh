#!/usr/bin/env bash
# The scale case of a cluster on PostgreSQL, on this machine (figures and
# the capacity model in BENCHMARKS.md, "Scale: queues spread over nodes"):
# the same load (SendMessage, then ReceiveMessage + DeleteMessageBatch)
# over thirty queues from sixteen connections, against one node and
# against three nodes holding the store's shards between them, each on a
# fresh database of one PostgreSQL; then one queue alone on one node (a
# queue's own ceiling: its shard's journal has one commit in flight).
# retsu-scale reports msgs/s, p50/p99/max per request kind, and the CPU
# the nodes and PostgreSQL spent per message.
#
# Usage: scripts/bench-scale.sh [--messages N] [--connections N]
#          [--queues N] [--shards N] [--durability LEVEL]
# PG_FSYNC=on keeps PostgreSQL's fsync; RETSU_BIN=path measures that
# server binary rather than building one.
set -euo pipefail
cd "$(dirname "$0")/.."

MESSAGES=30000
CONNECTIONS=16
QUEUES=30
SHARDS=8
DURABILITY=process
while [ $# -gt 0 ]; do
  case "$1" in
    --messages) MESSAGES=$2; shift 2 ;;
    --connections) CONNECTIONS=$2; shift 2 ;;
    --queues) QUEUES=$2; shift 2 ;;
    --shards) SHARDS=$2; shift 2 ;;
    --durability) DURABILITY=$2; shift 2 ;;
    *) echo "usage: $0 [--messages N] [--connections N] [--queues N] [--shards N] [--durability LEVEL]" >&2; exit 2 ;;
  esac
done

if [ -n "${RETSU_BIN:-}" ]; then
  BIN=$RETSU_BIN
else
  cargo build --release --bin retsu >&2
  BIN=target/release/retsu
fi
cargo build --release -p retsu-bench --bin retsu-scale >&2
SCALE=${CARGO_TARGET_DIR:-target}/release/retsu-scale
case "$BIN" in target/*) BIN=${CARGO_TARGET_DIR:-target}/${BIN#target/} ;; esac
WORK=$(mktemp -d /tmp/retsu-bench-scale.XXXXXX)
# Its own directory: PostgreSQL runs as another user.
PGDIR=$(mktemp -d /tmp/retsu-pg.XXXXXX)
NODE_PIDS=()
stop_nodes() {
  for p in "${NODE_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${NODE_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  NODE_PIDS=()
}
cleanup() {
  for p in "${NODE_PIDS[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  bash scripts/postgres.sh stop "$PGDIR" >/dev/null 2>&1 || true
  rm -rf "$WORK" "$PGDIR"
}
trap cleanup EXIT

ADMIN=$(bash scripts/postgres.sh start "$PGDIR")
PG_PID=$(head -1 "$PGDIR/data/postmaster.pid")
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Whether every shard is served, and each node serves its share.
spread() {
  local port=$1 nodes=$2
  curl -fs "http://127.0.0.1:$port/_retsu/cluster" 2>/dev/null | python3 -c '
import json, sys
v = json.load(sys.stdin)
nodes, shards = int(sys.argv[1]), len(v["shards"])
held = [len(n["shards"]) for n in v["nodes"]]
live = all(s["live"] for s in v["shards"])
sys.exit(0 if live and len(held) == nodes and sum(held) == shards
         and max(held) - min(held) <= 1 else 1)' "$nodes"
}

# run_case NAME NODES QUEUES
run_case() {
  local name=$1 nodes=$2 queues=$3 i port endpoints="" pids=""
  psql -q "$ADMIN" -c "CREATE DATABASE $name" >/dev/null
  local db=${ADMIN%/postgres}/$name ports=()
  for i in $(seq 1 "$nodes"); do
    port=$(free_port)
    ports+=("$port")
    "$BIN" --port "$port" --store "$db" --cluster-secret bench-cluster-secret-0123 \
      --node-id "node$i" --node-url "http://127.0.0.1:$port" --shards "$SHARDS" \
      --durability "$DURABILITY" --log-level warn >"$WORK/$name-node$i.log" 2>&1 &
    NODE_PIDS+=($!)
    pids+="${pids:+,}$!"
    endpoints+="${endpoints:+,}http://127.0.0.1:$port"
    for _ in $(seq 1 200); do
      curl -fs "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
      sleep 0.05
    done
  done
  for _ in $(seq 1 400); do
    spread "${ports[0]}" "$nodes" && break
    sleep 0.05
  done
  spread "${ports[0]}" "$nodes" || { echo "the shards did not spread over $nodes node(s)" >&2; exit 1; }
  # Served, not only held: a shard's first requests wait for its load.
  sleep 1
  echo "== $name: $nodes node(s), $queues queue(s), $CONNECTIONS connections, durability $DURABILITY, $SHARDS shards"
  "$SCALE" --endpoints "$endpoints" --queues "$queues" --connections "$CONNECTIONS" \
    --messages "$MESSAGES" --prefix "$name" --pids "retsu=$pids" --pids "postgres=$PG_PID"
  stop_nodes
}

run_case one_node 1 "$QUEUES"
run_case three_nodes 3 "$QUEUES"
run_case one_queue 1 1
run_case one_queue_three_nodes 3 1
