#!/usr/bin/env bash
# Restart load of a data directory holding N (default 1,000,000) stored
# 1 KiB messages: time from exec to the port answering, and the server's
# own "stored state loaded" figure. Deletes the directory afterwards.
#   cargo build --release --bin retsu && scripts/bench/restart.sh [N]
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-1000000}
DIR=target/restart-data
BIN=target/release/retsu
PORT=19555
rm -rf "$DIR"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$DIR"' EXIT
call() {
  curl -s -X POST "http://127.0.0.1:$PORT/" -H 'Content-Type: application/x-amz-json-1.0' \
    -H "X-Amz-Target: AmazonSQS.$1" -d "$2"
}
wait_port() {
  until curl -s -o /dev/null "http://127.0.0.1:$PORT/health"; do sleep 0.01; done
}
"$BIN" --data-dir "$DIR" --port $PORT --log-level warn & PID=$!
wait_port
call CreateQueue '{"QueueName":"big"}' >/dev/null
kill -TERM $PID; wait $PID
python3 scripts/bench/fill_data_dir.py "$DIR" big "$N"
echo "data directory: $(du -sb "$DIR" | cut -f1) bytes for $N messages ($(( $(du -sb "$DIR" | cut -f1) / N )) bytes each)"
sync
START=$(date +%s.%N)
"$BIN" --data-dir "$DIR" --port $PORT --log-level info > target/restart.log 2>&1 & PID=$!
wait_port
END=$(date +%s.%N)
echo "exec to serving: $(echo "$END - $START" | bc) s"
grep -o 'stored state loaded.*' target/restart.log || true
echo "RSS: $(grep VmRSS /proc/$PID/status)"
call GetQueueAttributes "{\"QueueUrl\":\"http://127.0.0.1:$PORT/000000000000/big\",\"AttributeNames\":[\"ApproximateNumberOfMessages\"]}"
echo
call ReceiveMessage "{\"QueueUrl\":\"http://127.0.0.1:$PORT/000000000000/big\"}" | head -c 120
echo
kill -TERM $PID; wait $PID || true
