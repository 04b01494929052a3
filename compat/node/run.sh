#!/usr/bin/env bash
# Node.js part of the Retsu cross-SDK compatibility suite.
#
#   compat/node/run.sh <endpoint-url> <results-dir>
#   compat/node/run.sh --install     # only the install below, then exit
#
# Installs the pinned clients (npm ci, from package-lock.json) when needed, then runs every
# Node client against <endpoint-url>, writing one results JSON per client into <results-dir>:
#   node-client-sqs-v3.json      @aws-sdk/client-sqs   (json)
#   node-aws-sdk-v2-json.json    aws-sdk v2, current   (json)
#   node-aws-sdk-v2-query.json   aws-sdk v2, old       (query)
#   node-sqs-consumer.json       sqs-consumer          (json)
#   node-sqs-producer.json       sqs-producer          (json)
#   node-client-sns-v3.json      @aws-sdk/client-sns   (query; the SNS scenarios, "service": "sns")
# Exit status: 0 when every suite ran (whatever its scenarios' verdicts); non-zero when a
# suite could not run (no node/npm, install failed, endpoint unreachable, a suite crashed).
set -uo pipefail

INSTALL_ONLY=0
if [ $# -eq 1 ] && [ "$1" = --install ]; then
  INSTALL_ONLY=1
elif [ $# -ne 2 ]; then
  echo "usage: $0 <endpoint-url> <results-dir> | --install" >&2
  exit 2
fi
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ "$INSTALL_ONLY" = 0 ]; then
  ENDPOINT="$1"
  RESULTS_DIR="$2"
  mkdir -p "$RESULTS_DIR" || exit 2
  RESULTS_DIR="$(cd "$RESULTS_DIR" && pwd)"
fi

for tool in node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "compat/node: '$tool' not found; Node.js >= 20 with npm is required" >&2
    exit 3
  fi
done
NODE_MAJOR="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$NODE_MAJOR" -lt 20 ]; then
  echo "compat/node: Node.js >= 20 required, found $(node --version)" >&2
  exit 3
fi

cd "$HERE" || exit 3

# (Re)install when node_modules is missing or older than the lock file.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "compat/node: installing pinned clients (npm ci)"
  if ! npm ci --no-audit --no-fund --ignore-scripts --loglevel=error; then
    echo "compat/node: npm ci failed" >&2
    exit 4
  fi
fi
[ "$INSTALL_ONLY" = 0 ] || exit 0

# Fixed fake credentials and region; keep every SDK away from real AWS configuration,
# instance metadata and proxies.
export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE
export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY
export AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1
export AWS_EC2_METADATA_DISABLED=true
export AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null
export AWS_SDK_JS_SUPPRESS_MAINTENANCE_MODE_MESSAGE=1
export AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true
unset AWS_PROFILE AWS_SESSION_TOKEN AWS_ENDPOINT_URL AWS_ENDPOINT_URL_SQS AWS_ENDPOINT_URL_SNS AWS_SDK_LOAD_CONFIG \
  HTTP_PROXY HTTPS_PROXY http_proxy https_proxy 2>/dev/null || true

# The endpoint must answer HTTP at all, or nothing below means anything.
if ! node -e '
  const u = new URL(process.argv[1]);
  const req = require("http").request({ host: u.hostname, port: u.port || 80, path: "/", method: "GET", timeout: 5000 },
    (res) => { res.resume(); process.exit(0); });
  req.on("timeout", () => { req.destroy(new Error("timeout")); });
  req.on("error", (e) => { console.error(e.message); process.exit(1); });
  req.end();' "$ENDPOINT"; then
  echo "compat/node: endpoint $ENDPOINT is not reachable" >&2
  exit 5
fi

status=0
start_all=$(date +%s)
for client in client-sqs-v3 aws-sdk-v2-json aws-sdk-v2-query sqs-consumer sqs-producer client-sns-v3; do
  out="$RESULTS_DIR/node-$client.json"
  rm -f "$out"
  start=$(date +%s)
  timeout 240 node index.js "$client" "$ENDPOINT" "$out"
  rc=$?
  if [ $rc -ne 0 ] || [ ! -s "$out" ]; then
    echo "compat/node: suite $client could not run (exit $rc)" >&2
    status=1
  fi
  echo "compat/node: $client took $(( $(date +%s) - start )) s"
done
echo "compat/node: all Node suites took $(( $(date +%s) - start_all )) s; results in $RESULTS_DIR"
exit $status
