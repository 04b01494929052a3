#!/usr/bin/env bash
# Retsu against the other SQS emulators, through the same benchmark.
#
# Installs each peer under target/peers/ (pinned versions, nothing
# global), then for each round starts every server in turn on a free
# loopback port, waits until it answers (the exec-to-answer time is its
# start-up figure), drives it with `retsu-bench --endpoint … --endpoint-pid …`
# and stops it. Retsu is started the same way from target/release/retsu.
# The order rotates each round so that the machine's drift hits every
# server alike. Each round also runs the benchmark's own Retsu-against-
# null-server comparison (the HTTP floor) for send, send-batch and drain.
#
#   cargo build --release --bin retsu && cargo build --release -p retsu-bench
#   scripts/bench-peers.sh [--rounds 3] [--scale 0.05] [--scale-for moto=0.01]
#                          [--memory-messages 20000] [--memory-for moto=2000]
#                          [--rounds-for moto=1]
#                          [--peers retsu,moto,goaws,elasticmq]
#
# --scale multiplies retsu-bench's message counts; --scale-for gives one
# server its own (moto's default is a fifth, so that its rounds end in
# minutes); --memory-for likewise for the messages the memory scenario
# stores; --rounds-for caps one server's rounds (moto's default is one:
# its round takes minutes, and its figures are far from the others', so
# drift between rounds does not change how they compare). The memory
# scenario runs in the first round only.
#
# A peer whose runtime is missing (python3, go, java + mvn) is skipped with
# a message. A scenario a peer cannot serve, or whose correctness check it
# fails, is reported with the peer's answer rather than stopping the run.
# Results: one JSON report per server and round in target/bench/peers/,
# and a summary table (medians over rounds) on stdout and in
# target/bench/peers/summary.md.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
PEERS_DIR=$TARGET/peers
OUT=$TARGET/bench/peers

MOTO_VERSION=5.2.6
GOAWS_VERSION=v0.4.5
ELASTICMQ_VERSION=1.7.1

ROUNDS=3
SCALE=0.05
declare -A SCALE_FOR=([moto]=0.01)
declare -A MEMORY_FOR=([moto]=2000)
declare -A ROUNDS_FOR=([moto]=1)
MEMORY_MESSAGES=20000
PEERS=retsu,moto,goaws,elasticmq
SCENARIOS=send,send-batch,drain,longpoll-wake,memory
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) ROUNDS=$2; shift 2 ;;
    --scale) SCALE=$2; shift 2 ;;
    --scale-for) SCALE_FOR[${2%%=*}]=${2#*=}; shift 2 ;;
    --memory-messages) MEMORY_MESSAGES=$2; shift 2 ;;
    --memory-for) MEMORY_FOR[${2%%=*}]=${2#*=}; shift 2 ;;
    --rounds-for) ROUNDS_FOR[${2%%=*}]=${2#*=}; shift 2 ;;
    --peers) PEERS=$2; shift 2 ;;
    --scenario) SCENARIOS=$2; shift 2 ;;
    *) echo "unknown argument $1 (see the header of $0)" >&2; exit 2 ;;
  esac
done

BENCH=$TARGET/release/retsu-bench
RETSU=$TARGET/release/retsu
for bin in "$BENCH" "$RETSU"; do
  if [ ! -x "$bin" ]; then
    echo "$bin not found: cargo build --release --bin retsu && cargo build --release -p retsu-bench" >&2
    exit 2
  fi
done
mkdir -p "$PEERS_DIR" "$OUT"
rm -f "$OUT"/*.json "$OUT"/*.log "$OUT"/startup.tsv

# --- installation (each once; a finished install leaves its marker) ---------

install_moto() {
  local dir=$PEERS_DIR/moto-$MOTO_VERSION
  [ -x "$dir/bin/moto_server" ] && return 0
  command -v python3 >/dev/null || { echo "moto: skipped, python3 is not installed"; return 1; }
  python3 -m venv "$dir" && "$dir/bin/pip" install -q "moto[server]==$MOTO_VERSION" \
    || { echo "moto: installation failed"; return 1; }
}

install_goaws() {
  local dir=$PEERS_DIR/goaws-$GOAWS_VERSION
  [ -x "$dir/goaws" ] && return 0
  command -v go >/dev/null || { echo "goaws: skipped, go is not installed"; return 1; }
  mkdir -p "$dir"
  # The main package is app/cmd; `go install` names the binary after it.
  GOPATH=$PEERS_DIR/gopath GOFLAGS=-modcacherw GOBIN=$dir \
    go install "github.com/Admiral-Piett/goaws/app/cmd@$GOAWS_VERSION" \
    && mv "$dir/cmd" "$dir/goaws" || { echo "goaws: installation failed"; return 1; }
}

install_elasticmq() {
  local dir=$PEERS_DIR/elasticmq-$ELASTICMQ_VERSION
  [ -f "$dir/lib/elasticmq-server_2.13-$ELASTICMQ_VERSION.jar" ] && return 0
  command -v java >/dev/null || { echo "elasticmq: skipped, java is not installed"; return 1; }
  command -v mvn >/dev/null || { echo "elasticmq: skipped, mvn is not installed"; return 1; }
  mkdir -p "$dir"
  cat > "$dir/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.retsu</groupId>
  <artifactId>elasticmq-peer</artifactId>
  <version>1</version>
  <dependencies>
    <dependency>
      <groupId>org.elasticmq</groupId>
      <artifactId>elasticmq-server_2.13</artifactId>
      <version>$ELASTICMQ_VERSION</version>
    </dependency>
  </dependencies>
</project>
EOF
  (cd "$dir" && mvn -q -Dmaven.repo.local="$PEERS_DIR/m2" dependency:copy-dependencies \
    -DoutputDirectory=lib) || { echo "elasticmq: installation failed"; return 1; }
}

# --- servers ------------------------------------------------------------------

free_port() {
  local port
  while :; do
    port=$((20000 + RANDOM % 20000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return
    fi
  done
}

protocol_of() {
  case $1 in goaws) echo query ;; *) echo json ;; esac
}

# The credential scope names the service for servers that emulate several
# on one port (moto); nothing here checks the signature.
SCOPE='Authorization: AWS4-HMAC-SHA256 Credential=bench/20260101/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=00'

# Whether the server on $1 answers ListQueues in protocol $2.
answers() {
  if [ "$2" = query ]; then
    curl -sf -o /dev/null --max-time 2 -H "$SCOPE" \
      -d 'Action=ListQueues&Version=2012-11-05' "http://127.0.0.1:$1/"
  else
    curl -sf -o /dev/null --max-time 2 -H "$SCOPE" -H 'Content-Type: application/x-amz-json-1.0' \
      -H 'X-Amz-Target: AmazonSQS.ListQueues' -d '{}' "http://127.0.0.1:$1/"
  fi
}

# Starts server $1 on port $2 with its log in $3; sets PID.
launch() {
  local name=$1 port=$2 log=$3
  case $name in
    retsu)
      "$RETSU" --host 127.0.0.1 --port "$port" >"$log" 2>&1 &
      ;;
    moto)
      "$PEERS_DIR/moto-$MOTO_VERSION/bin/moto_server" -H 127.0.0.1 -p "$port" >"$log" 2>&1 &
      ;;
    goaws)
      # goaws listens on 0.0.0.0 whatever the configuration says.
      local conf=$OUT/goaws.yaml
      cat >"$conf" <<EOF
Local:
  Host: 127.0.0.1
  Port: $port
  Region: us-east-1
  AccountId: "000000000000"
  LogToFile: false
EOF
      "$PEERS_DIR/goaws-$GOAWS_VERSION/goaws" -config "$conf" Local >"$log" 2>&1 &
      ;;
    elasticmq)
      local conf=$OUT/elasticmq.conf
      cat >"$conf" <<EOF
include classpath("application.conf")
node-address { protocol = http, host = "127.0.0.1", port = $port, context-path = "" }
rest-sqs { enabled = true, bind-port = $port, bind-hostname = "127.0.0.1", sqs-limits = strict }
rest-stats { enabled = false }
aws { region = us-east-1, accountId = 000000000000 }
EOF
      java -Dconfig.file="$conf" -cp "$PEERS_DIR/elasticmq-$ELASTICMQ_VERSION/lib/*" \
        org.elasticmq.server.Main >"$log" 2>&1 &
      ;;
  esac
  PID=$!
}

stop() {
  kill "$1" 2>/dev/null
  for _ in $(seq 100); do
    kill -0 "$1" 2>/dev/null || { wait "$1" 2>/dev/null; return; }
    sleep 0.1
  done
  kill -9 "$1" 2>/dev/null
  wait "$1" 2>/dev/null
}

# The scenarios of round $1: memory in the first only.
scenarios_for() {
  if [ "$1" = 1 ]; then echo "$SCENARIOS"; else echo "$SCENARIOS" | tr ',' '\n' | grep -v '^memory$' | paste -sd,; fi
}

# One round of server $1: start, time to the first answer, bench, stop.
run_server() {
  local name=$1 round=$2 port protocol t0 t1 log=$OUT/$1-r$2.log
  port=$(free_port)
  protocol=$(protocol_of "$name")
  t0=$(date +%s%N)
  launch "$name" "$port" "$log"
  local deadline=$((t0 + 120000000000))
  until answers "$port" "$protocol"; do
    if ! kill -0 "$PID" 2>/dev/null || [ "$(date +%s%N)" -gt "$deadline" ]; then
      echo "$name: did not answer on port $port (log: $log)"
      stop "$PID"
      return
    fi
  done
  t1=$(date +%s%N)
  sleep 0.2
  local rss
  rss=$(awk '/^VmRSS/ {print $2}' "/proc/$PID/status")
  printf '%s\t%s\t%s\t%s\n' "$name" "$round" "$(((t1 - t0) / 1000))" "$rss" >>"$OUT/startup.tsv"
  local scale=${SCALE_FOR[$name]:-$SCALE}
  echo "== $name, round $round: port $port, pid $PID, answered after $(((t1 - t0) / 1000000)) ms, scale $scale"
  "$BENCH" --endpoint "http://127.0.0.1:$port" --endpoint-pid "$PID" --client raw \
    --protocol "$protocol" --no-floor --scenario "$(scenarios_for "$round")" --rounds 1 --scale "$scale" \
    --memory-messages "${MEMORY_FOR[$name]:-$MEMORY_MESSAGES}" --out "$OUT/$name-r$round.json" \
    >"$OUT/$name-r$round.txt" 2>>"$log"
  grep '^FAILED' "$OUT/$name-r$round.txt"
  stop "$PID"
}

# The floor: the benchmark starts Retsu and the null server itself.
run_floor() {
  echo "== floor (retsu-bench's own Retsu and null server), round $1"
  "$BENCH" --client raw --scenario "$(echo "$SCENARIOS" | tr ',' '\n' |
    grep -E '^(send|send-batch|drain)$' | paste -sd,)" --rounds 1 --scale "$SCALE" \
    --out "$OUT/floor-r$1.json" >"$OUT/floor-r$1.txt" 2>"$OUT/floor-r$1.log"
  grep '^FAILED' "$OUT/floor-r$1.txt"
}

servers=()
for peer in ${PEERS//,/ }; do
  case $peer in
    retsu) servers+=(retsu) ;;
    moto | goaws | elasticmq) "install_$peer" && servers+=("$peer") ;;
    localstack) echo "localstack: skipped, its image needs an account's auth token since March 2026" ;;
    *) echo "unknown peer $peer (retsu, moto, goaws, elasticmq)" >&2; exit 2 ;;
  esac
done
servers+=(floor)

echo "rounds $ROUNDS, scale $SCALE, memory $MEMORY_MESSAGES messages, servers: ${servers[*]}"
for round in $(seq "$ROUNDS"); do
  n=${#servers[@]}
  for i in $(seq 0 $((n - 1))); do
    s=${servers[$(((i + round - 1) % n))]}
    [ "$round" -gt "${ROUNDS_FOR[$s]:-$ROUNDS}" ] && continue
    if [ "$s" = floor ]; then run_floor "$round"; else run_server "$s" "$round"; fi
  done
done

if command -v python3 >/dev/null; then
  python3 "$ROOT/scripts/bench/peers_summary.py" "$OUT" | tee "$OUT/summary.md"
else
  echo "python3 is missing: no summary; the reports are in $OUT"
fi
