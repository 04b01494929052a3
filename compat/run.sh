#!/usr/bin/env bash
# The cross-SDK compatibility matrix: builds retsu, installs every pinned
# client, runs each suite against its own freshly started server, and writes
# COMPATIBILITY.md at the repository root.
#
#   bash compat/run.sh              # every suite
#   bash compat/run.sh boto3-query  # some suites (others' old results are kept)
#   bash compat/run.sh java-v2 go-v2
#   bash compat/run.sh --install    # only install/build every client, run nothing
#                                   # (scripts/test.sh starts this in the background
#                                   # while it compiles, so downloads overlap the build)
#
# Suites (one column of COMPATIBILITY.md each, except node: five columns; aws-cli,
# boto3-json, node, java-v2, spring and go-v2 also fill one column each of the
# SNS table, see "SNS" in the contract below):
#   aws-cli        AWS CLI v1 (compat/cli)
#   boto3-json     boto3/botocore current, JSON        (compat/python)
#   boto3-query    boto3 1.28.80 / botocore 1.31.80, query
#   aiobotocore    aiobotocore (asyncio), JSON          (compat/python/aio_scenarios.py)
#   celery         Celery worker + producer on kombu's SQS transport (compat/python/celery_suite.py)
#   node           JS v3, aws-sdk v2 JSON and query, sqs-consumer, sqs-producer (compat/node)
#   java-v2        AWS SDK for Java 2.x via the BOM, JSON (compat/java/sdk-v2)
#   java-v1-query  aws-java-sdk-sqs 1.12.583, query, path-style (compat/java/sdk-v1-query)
#   java-v1-json   aws-java-sdk-sqs 1.12.797, JSON     (compat/java/sdk-v1-json)
#   spring         Spring Cloud AWS SQS: SqsTemplate + @SqsListener (compat/java/spring)
#   jms            Amazon SQS Java Messaging Library, JMS (compat/java/jms)
#   go-v2          aws-sdk-go-v2 service/sqs, JSON      (compat/go/sdkv2)
#   go-v1-query    aws-sdk-go v1.46.7, query            (compat/go/sdkv1, go.mod)
#   go-v1-json     aws-sdk-go v1.55.8, JSON             (compat/go/sdkv1, go.last.mod)
#   awslocal       LocalStack's awslocal (awscli-local)  (compat/localstack/scenarios.py)
#   localstack-client  localstack_client.session's boto3 clients (same file)
#   ansible        ansible's amazon.aws/community.aws modules, endpoint_url set (compat/ansible)
#   terraform-readback  the Terraform AWS provider's calls and read-back waits, in boto3
#                  (compat/terraform/readback.py), with the AWS CLI's `sts get-caller-identity`
#                  (TF_READBACK_TIME_SCALE=F multiplies its waits; 1, the provider's, by default)
# Each gets a FRESH `retsu` on a free 127.0.0.1 port, with --log-level
# debug (awslocal and localstack-client: with --localstack too, and
# LOCALSTACK_HOST naming it, as a project leaving LocalStack would run it); its output and the server's log go to
# compat/results/logs/<suite>.{log,server.log}. Every suite but the
# boto3/aws-cli/node ones (which hook their SDK to see each request) talks
# to retsu through compat/wiretap.py, a recording proxy: the protocol of
# every request is logged (logs/<suite>.wire.jsonl) and folded into the
# results; a client whose requests were not all on the protocol it claims
# fails every scenario.
#
# Needs python3 (venv + pip), node/npm, Java 17+ with Maven, Go 1.24+ and
# cargo; reaches only PyPI, npm, Maven Central, the Go module proxy and
# crates.io. Dependencies are cached in git-ignored folders (compat/.venv-*,
# compat/node/node_modules, compat/java/.m2, compat/go/.cache) and each
# installer skips what is up to date. A machine without Java (or Go) gets
# "skipped: no Java" ("skipped: no Go") in those columns; that is printed,
# and is not a failure. Exit status: non-zero if any applicable scenario
# failed, a suite could not run, or a result is missing.
#
# Environment:
#   RETSU_BIN=path   use this binary instead of `cargo build --release --bin retsu`
#   COMPAT_JOBS=N    suites run N at a time (default 2; aws-cli always alone), each
#                    with its own server, proxy and results files; most of a suite's
#                    time is process start-up and waits, so two overlap well on two
#                    cores. Each suite's output is held and printed whole, in
#                    suite order; COMPATIBILITY.md does not depend on the order
#                    suites finish in (report.py reads the results in a fixed order).
#
# ---------------------------------------------------------------------------
# Contract with the suites (shared with compat/node, written separately):
#
#   compat/node/run.sh <endpoint> <results-dir>
#     <endpoint>     base URL of a freshly started retsu with no queues,
#                    e.g. http://127.0.0.1:41234 (region us-east-1, account
#                    000000000000; returned queue URLs lead back to it).
#     <results-dir>  absolute path of compat/results/.
#   It installs its own pinned dependencies (npm ci from package-lock.json)
#   when needed, runs every Node client against the endpoint, and writes ONE
#   results JSON PER CLIENT into <results-dir>, named node-<client>.json.
#   Exit 0 when every client ran (whatever the verdicts), non-zero when one
#   could not run. RETSU_BIN (absolute path of the binary) is exported, should
#   a suite ever want to start further servers of its own.
#   This script calls it once, with one fresh server, if the file exists.
#
#   Results JSON (all suites; compat/report.py reads exactly this):
#     {"client": "boto3", "version": "1.35.0", "protocol": "json"|"query",
#      "results": {"<scenario>": {"status": "pass"|"fail"|"n/a",
#                                 "detail": "..."}},
#      "extra": {...optional notes...}}
#   Scenario keys: queue_lifecycle, list_queues_pagination,
#   send_receive_delete_attributes, batches_partial_failure,
#   visibility_change_release, delay, long_polling,
#   fifo_order_group_lock_dedup, dead_letter_and_move_task, tags,
#   errors_typed. A scenario a client cannot express is "n/a" with the reason
#   in "detail"; a key that is absent counts as a failure.
#
#   SNS (the same server speaks Amazon SNS, query protocol, same port): the
#   suites aws-cli, boto3-json, node, java-v2, spring and go-v2 also write
#   one SNS results file, the same format with "service": "sns" (protocol:
#   the one the SNS requests were seen on, "query"), which report.py puts in
#   a second table. Scenario keys: sns_topic_lifecycle, sns_fanout_envelope,
#   sns_raw_and_filter, sns_fifo, sns_errors. Files: <suite>.sns.json
#   (aws-cli: compat/cli/sns_scenarios.py; boto3-json:
#   compat/python/sns_scenarios.py); node writes node-client-sns-v3.json; the
#   wired java-v2, spring and go-v2 take it as a third argument
#   (<endpoint> <results.json> <sns-results.json>), and their SNS requests
#   are judged apart from their SQS ones (wiretap.py fold --service sns, by
#   the SigV4 credential scope).
#
#   LocalStack tools (awslocal, localstack-client): one results file each,
#   <suite>.json with "service": "localstack", which report.py puts in a third
#   table. Scenario keys: ls_queues, ls_topics, ls_subscriptions,
#   ls_developer_endpoints.
#
#   Infrastructure as code: ansible writes ansible.json ("service": "ansible";
#   keys ansible_caller_identity, ansible_apply, ansible_converged,
#   ansible_remove) and terraform-readback writes terraform-readback.json
#   ("service": "terraform"; keys tf_caller_identity, tf_sqs_queue,
#   tf_sqs_queue_policy, tf_sns_topic, tf_sns_topic_subscription, tf_destroy),
#   one table each.
# ---------------------------------------------------------------------------
set -euo pipefail

COMPAT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(dirname "$COMPAT")"
RESULTS="$COMPAT/results"
LOGS="$RESULTS/logs"
cd "$REPO"

INSTALL_ONLY=0
if [ "${1:-}" = "--install" ]; then
  INSTALL_ONLY=1
  shift
fi

ALL_SUITES=(aws-cli boto3-json boto3-query aiobotocore celery node
            java-v2 java-v1-query java-v1-json spring jms go-v2 go-v1-query go-v1-json
            awslocal localstack-client ansible terraform-readback)
if [ $# -gt 0 ]; then
  SUITES=("$@")
  for s in "${SUITES[@]}"; do
    case " ${ALL_SUITES[*]} " in *" $s "*) ;; *) echo "unknown suite: $s (known: ${ALL_SUITES[*]})" >&2; exit 2 ;; esac
  done
else
  SUITES=("${ALL_SUITES[@]}")
  [ "$INSTALL_ONLY" = 1 ] || rm -rf "$RESULTS"
fi
mkdir -p "$RESULTS" "$LOGS"

t_start=$(date +%s)
now() { date +%s; }

# ------------------------------------------------------------------ build
if [ "$INSTALL_ONLY" = 1 ]; then
  BIN=""
elif [ -n "${RETSU_BIN:-}" ]; then
  BIN="$(cd "$(dirname "$RETSU_BIN")" && pwd)/$(basename "$RETSU_BIN")"
else
  echo "== building retsu (cargo build --release --bin retsu)"
  cargo build --release --bin retsu
  BIN="$REPO/target/release/retsu"
fi
if [ "$INSTALL_ONLY" = 0 ]; then
  [ -x "$BIN" ] || { echo "no retsu binary at $BIN" >&2; exit 1; }
  export RETSU_BIN="$BIN"
fi
t_built=$(now)

# ------------------------------------------------------------------ install
want() { case " ${SUITES[*]} " in *" $1 "*) return 0 ;; esac; return 1; }
envs=()
want aws-cli && envs+=(cli)
want boto3-json && envs+=(current)
want boto3-query && envs+=(query)
want aiobotocore && envs+=(aio)
want celery && envs+=(celery)
if want awslocal || want localstack-client; then envs+=(localstack); fi
want ansible && envs+=(ansible)
if want terraform-readback; then
  case " ${envs[*]} " in *" current "*) ;; *) envs+=(current) ;; esac
  case " ${envs[*]} " in *" cli "*) ;; *) envs+=(cli) ;; esac
fi
if [ ${#envs[@]} -gt 0 ]; then
  echo "== installing pinned Python clients"
  bash "$COMPAT/python/setup.sh" "${envs[@]}"
fi
# The node suite installs its own pinned packages (npm ci) inside
# compat/node/run.sh when they are missing; --install does it ahead of time.
install_rc=0
if [ "$INSTALL_ONLY" = 1 ] && want node && [ -f "$COMPAT/node/run.sh" ]; then
  echo "== installing the Node clients (compat/node/run.sh --install)"
  rc=0; bash "$COMPAT/node/run.sh" --install || rc=$?
  # 3: no Node.js here; the run says so in node's columns.
  case $rc in 0|3) ;; *) install_rc=1 ;; esac
fi

# Java and Go: build once (cached); a missing toolchain skips those columns.
JAVA_STATE=none GO_STATE=none
if want java-v2 || want java-v1-query || want java-v1-json || want spring || want jms; then
  echo "== building the Java clients (compat/java/build.sh)"
  rc=0; bash "$COMPAT/java/build.sh" || rc=$?
  case $rc in 0) JAVA_STATE=ok ;; 3) JAVA_STATE="skipped: no Java" ;; *) JAVA_STATE="build failed (exit $rc)" ;; esac
fi
if want go-v2 || want go-v1-query || want go-v1-json; then
  echo "== building the Go clients (compat/go/build.sh)"
  rc=0; bash "$COMPAT/go/build.sh" || rc=$?
  case $rc in 0) GO_STATE=ok ;; 3) GO_STATE="skipped: no Go" ;; *) GO_STATE="build failed (exit $rc)" ;; esac
fi
t_installed=$(now)
if [ "$INSTALL_ONLY" = 1 ]; then
  for state in "$JAVA_STATE" "$GO_STATE"; do
    case "$state" in ok|none|skipped:*) ;; *) install_rc=1 ;; esac
  done
  echo "== installed in $(( t_installed - t_start ))s (java: $JAVA_STATE, go: $GO_STATE)"
  exit "$install_rc"
fi

# ------------------------------------------------------------------ server
SERVER_PID=""
ENDPOINT=""

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

start_server() { # start_server <suite>
  local log="$LOGS/$1.server.log" port attempt
  for attempt in 1 2 3; do
    port="$(free_port)"
    local extra=()
    case "$1" in awslocal|localstack-client) extra=(--localstack) ;; esac
    "$BIN" --host 127.0.0.1 --port "$port" --region us-east-1 --log-level debug "${extra[@]}" >"$log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 1 100); do
      if grep -q "retsu listening on" "$log" 2>/dev/null; then
        ENDPOINT="http://127.0.0.1:$port"
        return 0
      fi
      kill -0 "$SERVER_PID" 2>/dev/null || break
      sleep 0.1
    done
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
    echo "retsu did not start on port $port (attempt $attempt):" >&2
    tail -5 "$log" >&2 || true
  done
  return 1
}

stop_server() {
  if [ -n "$SERVER_PID" ]; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
  fi
}
trap 'stop_wiretap; stop_server' EXIT

# The scenario keys of each service, for the two writers below.
SCENARIO_NAMES_PY='
names = {"sqs": ["queue_lifecycle", "list_queues_pagination", "send_receive_delete_attributes",
                 "batches_partial_failure", "visibility_change_release", "delay", "long_polling",
                 "fifo_order_group_lock_dedup", "dead_letter_and_move_task", "tags", "errors_typed"],
         "sns": ["sns_topic_lifecycle", "sns_fanout_envelope", "sns_raw_and_filter", "sns_fifo", "sns_errors"],
         "localstack": ["ls_queues", "ls_topics", "ls_subscriptions", "ls_developer_endpoints"],
         "ansible": ["ansible_caller_identity", "ansible_apply", "ansible_converged", "ansible_remove"],
         "terraform": ["tf_caller_identity", "tf_sqs_queue", "tf_sqs_queue_policy", "tf_sns_topic",
                       "tf_sns_topic_subscription", "tf_destroy"]}
'

# A results file for a suite that produced none, so the report shows it.
write_crash_result() { # write_crash_result <file> <client> <version> <protocol> <detail> [sqs|sns]
  python3 -c "$SCENARIO_NAMES_PY"'
import json, sys
path, client, version, protocol, detail = sys.argv[1:6]
service = sys.argv[6] if len(sys.argv) > 6 else "sqs"
doc = {"client": client, "version": version, "protocol": protocol,
       "results": {n: {"status": "fail", "detail": detail} for n in names[service]}}
if service != "sqs":
    doc["service"] = service
json.dump(doc, open(path, "w"), indent=2)
' "$@"
}

# A results file for a suite whose toolchain is missing: every cell says so.
write_skip_result() { # write_skip_result <file> <client> <reason> [sqs|sns]
  python3 -c "$SCENARIO_NAMES_PY"'
import json, sys
path, client, reason = sys.argv[1:4]
service = sys.argv[4] if len(sys.argv) > 4 else "sqs"
doc = {"client": client, "version": "-", "protocol": "-",
       "results": {n: {"status": "skipped", "detail": reason} for n in names[service]}}
if service != "sqs":
    doc["service"] = service
json.dump(doc, open(path, "w"), indent=2)
' "$@"
}

# The suites that also run the SNS scenarios, and the SNS client each drives.
has_sns() { case "$1" in aws-cli|boto3-json|node|java-v2|spring|go-v2) return 0 ;; esac; return 1; }
sns_label() {
  case "$1" in
    java-v2) echo "aws-sdk-java-v2 sns" ;;
    spring) echo "spring-cloud-aws-sns" ;;
    go-v2) echo "aws-sdk-go-v2 service/sns" ;;
    node) echo "@aws-sdk/client-sns" ;;
    boto3-json) echo "boto3" ;;
    *) echo "$1" ;;
  esac
}
# The SNS results file of a suite (node's is written by compat/node/run.sh).
sns_out() { if [ "$1" = node ]; then echo "$RESULTS/node-client-sns-v3.json"; else echo "$RESULTS/$1.sns.json"; fi; }
# Writes a failing SNS results file when a suite that runs SNS left none.
sns_or_crash() { # sns_or_crash <suite> <detail>
  has_sns "$1" || return 0
  local out
  out="$(sns_out "$1")"
  [ -s "$out" ] || write_crash_result "$out" "$(sns_label "$1")" "?" "?" "$2" sns
}

# ------------------------------------------------------------------ wire proxy
WIRETAP_PID=""
WIRE_ENDPOINT=""

start_wiretap() { # start_wiretap <suite>: a recording proxy in front of $ENDPOINT
  local log="$LOGS/$1.wiretap.log"
  python3 "$COMPAT/wiretap.py" serve --upstream "$ENDPOINT" --log "$LOGS/$1.wire.jsonl" >"$log" 2>&1 &
  WIRETAP_PID=$!
  for _ in $(seq 1 100); do
    WIRE_ENDPOINT="$(sed -n 's/^wiretap listening on //p' "$log" 2>/dev/null)"
    [ -n "$WIRE_ENDPOINT" ] && return 0
    kill -0 "$WIRETAP_PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "wiretap did not start:" >&2
  cat "$log" >&2 || true
  return 1
}

stop_wiretap() {
  if [ -n "$WIRETAP_PID" ]; then
    kill "$WIRETAP_PID" 2>/dev/null || true
    wait "$WIRETAP_PID" 2>/dev/null || true
    WIRETAP_PID=""
  fi
}

# The command of a wire-observed suite, given the proxy endpoint and its results file
# (java-v2, spring and go-v2 also get their SNS results file, <suite>.sns.json).
java_cp() { # java_cp <module>
  echo "$COMPAT/java/$1/target/classes:$(cat "$COMPAT/java/$1/target/classpath.txt")"
}
wired_command() { # wired_command <suite> <endpoint> <out>: sets CMD
  local ep="$2" out="$3" gobin="$COMPAT/go/.cache/bin"
  local jopts=(-XX:TieredStopAtLevel=1 -Daws.java.v1.disableDeprecationAnnouncement=true)
  case "$1" in
    java-v2) CMD=(java "${jopts[@]}" -cp "$(java_cp sdk-v2)" dev.retsu.compat.SdkV2 "$ep" "$out" "${out%.json}.sns.json") ;;
    java-v1-query) CMD=(java "${jopts[@]}" -cp "$(java_cp sdk-v1-query)" dev.retsu.compat.SdkV1 "$ep" "$out" query) ;;
    java-v1-json) CMD=(java "${jopts[@]}" -cp "$(java_cp sdk-v1-json)" dev.retsu.compat.SdkV1 "$ep" "$out" json) ;;
    spring) CMD=(java "${jopts[@]}" -cp "$(java_cp spring)" dev.retsu.compat.SpringSqs "$ep" "$out" "${out%.json}.sns.json") ;;
    jms) CMD=(java "${jopts[@]}" -cp "$(java_cp jms)" dev.retsu.compat.Jms "$ep" "$out") ;;
    go-v2) CMD=("$gobin/sdkv2" "$ep" "$out" "${out%.json}.sns.json") ;;
    go-v1-query) CMD=("$gobin/sdkv1-query" "$ep" "$out") ;;
    go-v1-json) CMD=("$gobin/sdkv1-json" "$ep" "$out") ;;
    aiobotocore) CMD=("$COMPAT/.venv-aio/bin/python" "$COMPAT/python/aio_scenarios.py" --endpoint "$ep" --out "$out") ;;
    celery) CMD=("$COMPAT/.venv-celery/bin/python" "$COMPAT/python/celery_suite.py" --endpoint "$ep" --out "$out") ;;
  esac
}

# The client a suite runs, for a column that could not run.
suite_label() {
  case "$1" in
    java-v2) echo "aws-sdk-java-v2 sqs" ;;
    java-v1-query|java-v1-json) echo "aws-java-sdk-sqs (v1) ${1#java-v1-}" ;;
    spring) echo "spring-cloud-aws-sqs" ;;
    jms) echo "amazon-sqs-java-messaging-lib (JMS)" ;;
    go-v2) echo "aws-sdk-go-v2 service/sqs" ;;
    go-v1-query|go-v1-json) echo "aws-sdk-go (v1) ${1#go-v1-}" ;;
    *) echo "$1" ;;
  esac
}

# Why a wired suite cannot run on this machine ("" if it can).
skip_reason() {
  case "$1" in
    java-*|spring|jms) [ "$JAVA_STATE" = ok ] || echo "$JAVA_STATE" ;;
    go-*) [ "$GO_STATE" = ok ] || echo "$GO_STATE" ;;
  esac
}

# ------------------------------------------------------------------ suites
failed_suites=()
skipped_suites=()
timings=()

run_suite() { # run_suite <suite>
  local suite="$1" log="$LOGS/$1.log" rc=0 t0
  t0=$(now)
  echo "== $suite"
  case "$suite" in
    node) rm -f "$RESULTS"/node-*.json ;;
    *) rm -f "$RESULTS/$suite.json" "$RESULTS/$suite.sns.json" ;;
  esac
  local why
  why="$(skip_reason "$suite")"
  case "$why" in
    "") ;;
    skipped:*)
      echo "   $why" | tee "$log"
      write_skip_result "$RESULTS/$suite.json" "$(suite_label "$suite")" "$why"
      if has_sns "$suite"; then write_skip_result "$(sns_out "$suite")" "$(sns_label "$suite")" "$why" sns; fi
      skipped_suites+=("$suite ($why)")
      return 0 ;;
    *)
      echo "   cannot run: $why" | tee "$log"
      write_crash_result "$RESULTS/$suite.json" "$suite" "?" "?" "$why; see the build output above"
      sns_or_crash "$suite" "$why; see the build output above"
      failed_suites+=("$suite ($why)")
      return 0 ;;
  esac
  if ! start_server "$suite"; then
    failed_suites+=("$suite (server did not start)")
    [ "$suite" = node ] || write_crash_result "$RESULTS/$suite.json" "$suite" "?" "?" \
      "retsu did not start; see compat/results/logs/$suite.server.log"
    sns_or_crash "$suite" "retsu did not start; see compat/results/logs/$suite.server.log"
    return 0
  fi
  echo "   retsu $ENDPOINT (pid $SERVER_PID)"
  case "$suite" in
    aws-cli)
      python3 "$COMPAT/cli/scenarios.py" --aws "$COMPAT/.venv-cli/bin/aws" \
        --endpoint "$ENDPOINT" --out "$RESULTS/aws-cli.json" --expect-protocol json 2>&1 | tee "$log" || rc=$?
      [ -s "$RESULTS/aws-cli.json" ] || write_crash_result "$RESULTS/aws-cli.json" aws-cli "?" json \
        "suite exited $rc without results; see compat/results/logs/$suite.log"
      src=0
      python3 "$COMPAT/cli/sns_scenarios.py" --aws "$COMPAT/.venv-cli/bin/aws" \
        --endpoint "$ENDPOINT" --out "$RESULTS/aws-cli.sns.json" 2>&1 | tee -a "$log" || src=$?
      sns_or_crash aws-cli "SNS suite exited $src without results; see compat/results/logs/$suite.log"
      [ "$src" -le "$rc" ] || rc=$src
      ;;
    boto3-json)
      "$COMPAT/.venv-boto3-current/bin/python" "$COMPAT/python/scenarios.py" \
        --endpoint "$ENDPOINT" --out "$RESULTS/boto3-json.json" --expect-protocol json 2>&1 | tee "$log" || rc=$?
      [ -s "$RESULTS/boto3-json.json" ] || write_crash_result "$RESULTS/boto3-json.json" boto3 "?" json \
        "suite exited $rc without results; see compat/results/logs/$suite.log"
      src=0
      "$COMPAT/.venv-boto3-current/bin/python" "$COMPAT/python/sns_scenarios.py" \
        --endpoint "$ENDPOINT" --out "$RESULTS/boto3-json.sns.json" 2>&1 | tee -a "$log" || src=$?
      sns_or_crash boto3-json "SNS suite exited $src without results; see compat/results/logs/$suite.log"
      [ "$src" -le "$rc" ] || rc=$src
      ;;
    awslocal|localstack-client)
      LOCALSTACK_HOST="${ENDPOINT#http://}" "$COMPAT/.venv-localstack/bin/python" "$COMPAT/localstack/scenarios.py" \
        --tool "$suite" --out "$RESULTS/$suite.json" 2>&1 | tee "$log" || rc=$?
      [ -s "$RESULTS/$suite.json" ] || write_crash_result "$RESULTS/$suite.json" "$suite" "?" "?" \
        "suite exited $rc without results; see compat/results/logs/$suite.log" localstack
      ;;
    ansible)
      "$COMPAT/.venv-ansible/bin/python" "$COMPAT/ansible/run_ansible.py" --endpoint "$ENDPOINT" \
        --out "$RESULTS/ansible.json" --log "$LOGS/ansible.playbooks.log" 2>&1 | tee "$log" || rc=$?
      [ -s "$RESULTS/ansible.json" ] || write_crash_result "$RESULTS/ansible.json" ansible "?" "?" \
        "suite exited $rc without results; see compat/results/logs/$suite.log" ansible
      ;;
    terraform-readback)
      "$COMPAT/.venv-boto3-current/bin/python" "$COMPAT/terraform/readback.py" --endpoint "$ENDPOINT" \
        --aws "$COMPAT/.venv-cli/bin/aws" --out "$RESULTS/terraform-readback.json" \
        --time-scale "${TF_READBACK_TIME_SCALE:-1}" 2>&1 | tee "$log" || rc=$?
      [ -s "$RESULTS/terraform-readback.json" ] || write_crash_result "$RESULTS/terraform-readback.json" \
        terraform-readback "?" "?" "suite exited $rc without results; see compat/results/logs/$suite.log" terraform
      ;;
    boto3-query)
      "$COMPAT/.venv-boto3-query/bin/python" "$COMPAT/python/scenarios.py" \
        --endpoint "$ENDPOINT" --out "$RESULTS/boto3-query.json" --expect-protocol query 2>&1 | tee "$log" || rc=$?
      [ -s "$RESULTS/boto3-query.json" ] || write_crash_result "$RESULTS/boto3-query.json" boto3 "?" query \
        "suite exited $rc without results; see compat/results/logs/$suite.log"
      ;;
    node)
      if [ -f "$COMPAT/node/run.sh" ]; then
        bash "$COMPAT/node/run.sh" "$ENDPOINT" "$RESULTS" 2>&1 | tee "$log" || rc=$?
        if ! ls "$RESULTS"/node-*.json >/dev/null 2>&1; then
          write_crash_result "$RESULTS/node-suite.json" "node suites" "?" "?" \
            "compat/node/run.sh exited $rc without results; see compat/results/logs/$suite.log"
        fi
        sns_or_crash node "compat/node/run.sh wrote no SNS results (exit $rc); see compat/results/logs/$suite.log"
        # Scenario verdicts are in the JSON; a non-zero exit means a client could not run.
        [ "$rc" -eq 0 ] || failed_suites+=("node (compat/node/run.sh exited $rc)")
      else
        echo "   compat/node/run.sh not present; skipping" | tee "$log"
        failed_suites+=("node (compat/node/run.sh missing)")
      fi
      rc=0
      ;;
    *)
      # Wire-observed suites: the client talks to retsu through compat/wiretap.py.
      if start_wiretap "$suite"; then
        wired_command "$suite" "$WIRE_ENDPOINT" "$RESULTS/$suite.json"
        echo "   through wiretap $WIRE_ENDPOINT"
        timeout 600 "${CMD[@]}" 2>&1 | tee "$log" || rc=$?
        stop_wiretap
        if [ -s "$RESULTS/$suite.json" ]; then
          python3 "$COMPAT/wiretap.py" fold --log "$LOGS/$suite.wire.jsonl" "$RESULTS/$suite.json" | tee -a "$log"
        else
          write_crash_result "$RESULTS/$suite.json" "$suite" "?" "?" \
            "suite exited $rc without results; see compat/results/logs/$suite.log"
        fi
        if has_sns "$suite"; then
          if [ -s "$RESULTS/$suite.sns.json" ]; then
            python3 "$COMPAT/wiretap.py" fold --service sns --log "$LOGS/$suite.wire.jsonl" \
              "$RESULTS/$suite.sns.json" | tee -a "$log"
          else
            sns_or_crash "$suite" "suite exited $rc without SNS results; see compat/results/logs/$suite.log"
          fi
        fi
      else
        write_crash_result "$RESULTS/$suite.json" "$suite" "?" "?" "the wire proxy did not start"
        sns_or_crash "$suite" "the wire proxy did not start"
        rc=2
      fi
      ;;
  esac
  stop_server
  timings+=("$suite $(( $(now) - t0 ))s")
  # A scenario failure exits 1 (verdicts are in the JSON); anything else is a crash.
  if [ "$rc" -gt 1 ]; then failed_suites+=("$suite (exit $rc)"); fi
}

# Each suite runs in a subshell of its own (scripts/ordered-jobs.sh): its
# output goes to a file, printed whole once it and every suite before it
# have finished, and its problems and time come back through files.
STATE="$(mktemp -d)"
# shellcheck source=../scripts/ordered-jobs.sh
source "$REPO/scripts/ordered-jobs.sh"
ordered_init "$STATE"
trap 'kill $(jobs -p) 2>/dev/null || true; wait; stop_wiretap; stop_server; rm -rf "$STATE"' EXIT

suite_job() { # suite_job <suite>, in a subshell
  trap 'stop_wiretap; stop_server' EXIT
  trap 'exit 143' TERM INT
  failed_suites=() skipped_suites=() timings=()
  run_suite "$1"
  {
    printf 'failed\t%s\n' ${failed_suites[@]+"${failed_suites[@]}"}
    printf 'skipped\t%s\n' ${skipped_suites[@]+"${skipped_suites[@]}"}
    printf 'timing\t%s\n' ${timings[@]+"${timings[@]}"}
  } | grep -v $'\t$' >"$STATE/$1.state" || true
}

# aws-cli runs alone: its scenarios time single `aws` start-ups (about a
# second each) against one-second windows, which a second suite sharing the
# cores would stretch.
solo() { [ "$1" = aws-cli ]; }
jobs_max=${COMPAT_JOBS:-2}
for s in "${SUITES[@]}"; do
  if solo "$s"; then
    ordered_run 1 "$s" suite_job "$s"
    ordered_wait_below 1
  else
    ordered_run "$jobs_max" "$s" suite_job "$s"
  fi
done
ordered_finish

for s in "${SUITES[@]}"; do
  if [ ! -f "$STATE/$s.done" ]; then
    cat "$STATE/$s.out" 2>/dev/null || true
    failed_suites+=("$s (did not finish)")
    continue
  fi
  while IFS=$'\t' read -r kind what; do
    case "$kind" in
      failed) failed_suites+=("$what") ;;
      skipped) skipped_suites+=("$what") ;;
      timing) timings+=("$what") ;;
    esac
  done <"$STATE/$s.state"
done

# ------------------------------------------------------------------ report
echo "== report"
report_rc=0
python3 "$COMPAT/report.py" --results "$RESULTS" --out "$REPO/COMPATIBILITY.md" || report_rc=$?

echo "== timings: build $(( t_built - t_start ))s, install $(( t_installed - t_built ))s, ${timings[*]:-}; total $(( $(now) - t_start ))s"
if [ ${#skipped_suites[@]} -gt 0 ]; then
  printf 'SKIPPED (toolchain missing on this machine): %s\n' "${skipped_suites[@]}"
fi
if [ ${#failed_suites[@]} -gt 0 ]; then
  printf 'suite problem: %s\n' "${failed_suites[@]}" >&2
fi
if [ "$report_rc" -ne 0 ] || [ ${#failed_suites[@]} -gt 0 ]; then
  echo "compatibility matrix: FAILED (see COMPATIBILITY.md)" >&2
  exit 1
fi
echo "compatibility matrix: all applicable scenarios passed"
