#!/usr/bin/env bash
# `--auth` against real clients: aws-cli and boto3 (JSON and query
# protocols) with the right key work; with a wrong secret they get
# SignatureDoesNotMatch, with an unknown key InvalidClientTokenId; a boto3
# presigned URL (query protocol, UNSIGNED-PAYLOAD) works.
#
#   bash compat/auth-check.sh     (after compat/python/setup.sh; RETSU_BIN=path to skip the build)
set -euo pipefail
COMPAT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$(dirname "$COMPAT")"
if [ -z "${RETSU_BIN:-}" ]; then
  cargo build --release --bin retsu
  RETSU_BIN=target/release/retsu
fi
LOG="$(mktemp)"
PORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
"$RETSU_BIN" --port "$PORT" --auth --auth-key AKIDCOMPAT:compat/secret+1:123456789012 --log-level debug >"$LOG" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null || true; wait $PID 2>/dev/null || true; rm -f "$LOG"' EXIT
for _ in $(seq 1 100); do grep -q "retsu listening on" "$LOG" && break; sleep 0.1; done
export ENDPOINT="http://127.0.0.1:$PORT" AWS_DEFAULT_REGION=us-east-1 AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null
fails=0
check() { # check <name> <expected substring> <command...>
  local name="$1" want="$2" out
  shift 2
  out="$("$@" 2>&1 || true)"
  if grep -qF -- "$want" <<<"$out"; then echo "ok   $name"; else echo "FAIL $name: wanted '$want', got: $out"; fails=$((fails + 1)); fi
}
aws_as() { # aws_as <key> <secret> <args...>
  AWS_ACCESS_KEY_ID="$1" AWS_SECRET_ACCESS_KEY="$2" "$COMPAT/.venv-cli/bin/aws" --endpoint-url "$ENDPOINT" sqs "${@:3}"
}
check "aws-cli right key" "/123456789012/auth-cli" aws_as AKIDCOMPAT 'compat/secret+1' create-queue --queue-name auth-cli
check "aws-cli send" "MessageId" aws_as AKIDCOMPAT 'compat/secret+1' send-message --queue-url "$ENDPOINT/123456789012/auth-cli" --message-body 'hi there+/='
check "aws-cli wrong secret" "SignatureDoesNotMatch" aws_as AKIDCOMPAT wrong list-queues
check "aws-cli unknown key" "InvalidClientTokenId" aws_as AKIDNOBODY 'compat/secret+1' list-queues
for venv in boto3-current boto3-query; do
  # The script's own last line, and its exit status: a traceback quoting
  # the source line that prints "all ok" must not pass for success.
  if out="$("$COMPAT/.venv-$venv/bin/python" "$COMPAT/python/auth_check.py" "$ENDPOINT" 2>&1)" &&
    [[ "$(tail -n 1 <<<"$out")" == "all ok "* ]]; then
    echo "ok   $venv: $(tail -n 1 <<<"$out")"
  else
    echo "FAIL $venv: $out"; fails=$((fails + 1))
  fi
done
[ "$fails" -eq 0 ] || { echo "auth-check: $fails failed (server log follows)"; tail -20 "$LOG"; exit 1; }
echo "auth-check: all passed"
