#!/usr/bin/env bash
# The cluster's costs, on this machine (figures in BENCHMARKS.md, "A
# cluster on PostgreSQL"):
#
#   1. forwarding: the same retsu-bench scenarios sent to the node holding
#      the store's lease and to a node that passes requests on to it,
#      alternating, ROUNDS times (p50, p99, max and throughput of each,
#      and the CPU per message of the node the requests went to);
#      the store has one shard, so one node owns every queue the benchmark
#      makes and the other passes every request on: one hop, measured;
#   2. failover: the holder killed with SIGKILL, FAILOVERS times; the time
#      from the kill to the first successful answer through another node
#      (median and max), against the lease length.
#
# Usage: scripts/bench-cluster.sh [--lease SECONDS] [--rounds N]
#          [--failovers N] [--durability LEVEL]
# A throwaway PostgreSQL from scripts/postgres.sh (PG_FSYNC=on keeps its
# fsync); release builds of retsu and retsu-bench (RETSU_BIN=path measures
# a built retsu instead, to compare two builds).
set -euo pipefail
cd "$(dirname "$0")/.."

LEASE=2
ROUNDS=3
FAILOVERS=10
DURABILITY=process
while [ $# -gt 0 ]; do
  case "$1" in
    --lease) LEASE=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --failovers) FAILOVERS=$2; shift 2 ;;
    --durability) DURABILITY=$2; shift 2 ;;
    *) echo "usage: $0 [--lease S] [--rounds N] [--failovers N] [--durability LEVEL]" >&2; exit 2 ;;
  esac
done

if [ -z "${RETSU_BIN:-}" ]; then cargo build --release --bin retsu >&2; fi
cargo build --release -p retsu-bench >&2
BIN=${RETSU_BIN:-target/release/retsu}
BENCH=target/release/retsu-bench
WORK=$(mktemp -d /tmp/retsu-bench-cluster.XXXXXX)
# Its own directory: PostgreSQL runs as another user.
PGDIR=$(mktemp -d /tmp/retsu-pg.XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  bash scripts/postgres.sh stop "$PGDIR" >/dev/null 2>&1 || true
  rm -rf "$WORK" "$PGDIR"
}
trap cleanup EXIT

ADMIN=$(bash scripts/postgres.sh start "$PGDIR")
DB=${ADMIN%/postgres}/bench
psql -q "$ADMIN" -c "CREATE DATABASE bench" >/dev/null
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
PORTS=($(free_port) $(free_port))
NODE_PID=()

start_node() {
  local i=$1 port=${PORTS[$1]}
  "$BIN" --port "$port" --store "$DB" --cluster-secret bench-cluster-secret-0123 \
    --node-id "node$i" --node-url "http://127.0.0.1:$port" --lease "$LEASE" --shards 1 \
    --durability "$DURABILITY" --log-level warn >"$WORK/node$i.log" 2>&1 &
  NODE_PID[$i]=$!
  PIDS+=($!)
  for _ in $(seq 1 200); do
    curl -fs "http://127.0.0.1:$port/health" >/dev/null 2>&1 && return 0
    sleep 0.05
  done
  echo "node$i did not start" >&2; cat "$WORK/node$i.log" >&2; exit 1
}

# The index of the node serving from the store, once the other agrees.
holder() {
  for _ in $(seq 1 400); do
    for i in 0 1; do
      local v
      v=$(curl -fs "http://127.0.0.1:${PORTS[$i]}/_retsu/cluster" 2>/dev/null || true)
      if echo "$v" | grep -q '"serving":true'; then
        local id="node$i" o=$((1 - i))
        if curl -fs "http://127.0.0.1:${PORTS[$o]}/_retsu/cluster" 2>/dev/null \
            | grep -q "\"holder\":\"$id\""; then
          echo "$i"; return 0
        fi
      fi
    done
    sleep 0.025
  done
  echo "no holder" >&2; exit 1
}

start_node 0
start_node 1
H=$(holder)
F=$((1 - H))
echo "== forwarding (durability $DURABILITY, lease ${LEASE}s): holder node$H, forwarder node$F"
for round in $(seq 1 "$ROUNDS"); do
  for who in holder forwarder; do
    if [ $who = holder ]; then n=$H; else n=$F; fi
    port=${PORTS[$n]}
    echo "-- round $round, $who (port $port)"
    "$BENCH" --endpoint "http://127.0.0.1:$port" --endpoint-pid "${NODE_PID[$n]}" \
      --scenario send,send-batch,drain \
      --client raw --no-floor --rounds 1 --out "$WORK/$who-$round.json" 2>&1 \
      | grep -E "^\s*(scenario|send|send-batch|drain)\b" || true
    # The CPU (user + system) of the node the requests were sent to.
    python3 - "$WORK/$who-$round.json" <<'PY'
import json, sys
for m in json.load(open(sys.argv[1]))["measurements"]:
    if m.get("server_cpu_s") and m.get("messages"):
        print(f"  {m['scenario']} {m['variant']}: this node's CPU "
              f"{m['server_cpu_s'] * 1e6 / m['messages']:.1f} µs per message")
PY
  done
done

echo "== failover: SIGKILL the holder $FAILOVERS times (lease ${LEASE}s)"
TIMES=()
for n in $(seq 1 "$FAILOVERS"); do
  H=$(holder)
  F=$((1 - H))
  curl -fs -X POST "http://127.0.0.1:${PORTS[$F]}/" -d "Action=CreateQueue&QueueName=failover" >/dev/null
  t0=$(date +%s%N)
  kill -KILL "${NODE_PID[$H]}"
  wait "${NODE_PID[$H]}" 2>/dev/null || true
  until [ "$(curl -s -o /dev/null -w '%{http_code}' -m 1 -X POST "http://127.0.0.1:${PORTS[$F]}/" \
      -d "Action=SendMessage&QueueUrl=http://127.0.0.1:${PORTS[$F]}/000000000000/failover&MessageBody=x")" = 200 ]; do
    sleep 0.01
  done
  t1=$(date +%s%N)
  ms=$(( (t1 - t0) / 1000000 ))
  TIMES+=("$ms")
  echo "failover $n: ${ms} ms"
  start_node "$H"
done
sorted=($(printf '%s\n' "${TIMES[@]}" | sort -n))
count=${#sorted[@]}
echo "failover over $count kills: median ${sorted[$((count / 2))]} ms, max ${sorted[$((count - 1))]} ms (lease $(awk "BEGIN{print $LEASE*1000}") ms; 2x lease $(awk "BEGIN{print $LEASE*2000}") ms)"
