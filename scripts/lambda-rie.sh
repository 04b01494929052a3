#!/usr/bin/env bash
# AWS's Lambda Runtime Interface Emulator and the Python and Node.js
# runtime interface clients for it, for the Lambda event source mapping
# tests (tests/lambda.rs, tests/lambda_node.rs) and for anyone trying a
# handler by hand.
#
#   bash scripts/lambda-rie.sh setup
#       builds aws-lambda-rie from its Go module into scripts/.lambda/bin
#       (the version the Go module proxy names as @latest, unless
#       RIE_VERSION is set) and makes a venv in scripts/.lambda/venv with
#       awslambdaric and aws-lambda-powertools[parser] from PyPI. Prints
#       "ready", or "skipped: no Go" / "skipped: no python3" and exits 3.
#   bash scripts/lambda-rie.sh setup-node
#       builds the emulator as setup does, and installs AWS's Node.js
#       runtime interface client, aws-lambda-ric (RIC_NODE_VERSION, pinned
#       below), from npm into scripts/.lambda/node. Its install scripts
#       compile a C++ addon (curl and aws-lambda-cpp from the sources the
#       package carries, then node-gyp against the headers of the node on
#       PATH), so it needs cmake, make and a C++ compiler. Prints "ready",
#       or "skipped: no Go" / "skipped: no node" / "skipped: no cmake" /
#       "skipped: no C++ compiler" and exits 3.
#   bash scripts/lambda-rie.sh setup-cli
#       makes a venv in scripts/.lambda/cli with the AWS CLI v1 (the
#       version compat/ pins), so the tests drive mappings as a user does
#       with `aws lambda ...`. Prints "ready", or "skipped: no python3" and
#       exits 3.
#   bash scripts/lambda-rie.sh run ADDRESS DIR HANDLER
#       runs the emulator on ADDRESS (e.g. 127.0.0.1:9001) with the Python
#       handler HANDLER (module.function) from DIR; the Invoke API is then
#       http://ADDRESS/2015-03-31/functions/function/invocations.
#       AWS_LAMBDA_FUNCTION_TIMEOUT (seconds) is the handler's timeout;
#       RIE_RUNTIME_API (host:port, default 127.0.0.1:9001) is where the
#       emulator serves the Runtime API to its handler: give each emulator
#       running at once its own.
#
#   bash scripts/lambda-rie.sh run-node ADDRESS DIR HANDLER
#       the same with a Node.js handler (file.export, e.g. handlers.echo
#       for handlers.mjs) run by aws-lambda-ric.
#
# Why the real emulator: it is what AWS's base images run, so the request
# it accepts and the answers it gives (errors, timeouts) are AWS's.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$here/.lambda"
module=github.com/aws/aws-lambda-runtime-interface-emulator
# Pinned: its native addon is built at install, and a new major may need a
# newer node (4.x declares node >= 22 and runs on 20 too).
ric_node_version="${RIC_NODE_VERSION:-4.0.2}"

emulator() {
    mkdir -p "$root/bin"
    if [[ ! -x "$root/bin/aws-lambda-rie" ]]; then
        local version="${RIE_VERSION:-$(go list -m -f '{{.Version}}' "$module@latest")}"
        env GOBIN="$root/bin" CGO_ENABLED=0 go install "$module/cmd/aws-lambda-rie@$version" >&2
        echo "$version" > "$root/bin/aws-lambda-rie.version"
    fi
}

setup() {
    command -v go >/dev/null || { echo "skipped: no Go"; exit 3; }
    command -v python3 >/dev/null || { echo "skipped: no python3"; exit 3; }
    emulator
    if [[ ! -x "$root/venv/bin/python" ]] || ! "$root/venv/bin/python" -c 'import awslambdaric, aws_lambda_powertools, pydantic' 2>/dev/null; then
        python3 -m venv "$root/venv"
        "$root/venv/bin/pip" install --quiet --disable-pip-version-check \
            awslambdaric 'aws-lambda-powertools[parser]' >&2
    fi
    echo ready
}

setup_node() {
    command -v go >/dev/null || { echo "skipped: no Go"; exit 3; }
    command -v node >/dev/null && command -v npm >/dev/null || { echo "skipped: no node"; exit 3; }
    command -v cmake >/dev/null || command -v cmake3 >/dev/null || { echo "skipped: no cmake"; exit 3; }
    command -v c++ >/dev/null || command -v g++ >/dev/null || { echo "skipped: no C++ compiler"; exit 3; }
    emulator
    local dir="$root/node" ric="$root/node/node_modules/aws-lambda-ric"
    if [[ -f "$ric/rapid-client.node" ]] && grep -q "\"version\": \"$ric_node_version\"" "$ric/package.json"; then
        echo ready
        return
    fi
    mkdir -p "$dir"
    # A project of its own, so nothing is installed globally; allowScripts
    # lets npm versions that hold back dependencies' install scripts run
    # the one that builds the addon.
    cat > "$dir/package.json" <<JSON
{
  "name": "retsu-lambda-node",
  "private": true,
  "dependencies": { "aws-lambda-ric": "$ric_node_version" },
  "allowScripts": { "aws-lambda-ric@$ric_node_version": true }
}
JSON
    # node-gyp would download node's headers; the node on PATH carries
    # them (include/node beside its bin/) on most installs.
    local prefix
    prefix="$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")"
    if [[ -f "$prefix/include/node/node.h" ]]; then
        export npm_config_nodedir="$prefix"
    fi
    (cd "$dir" && npm install --no-audit --no-fund --loglevel=error >&2)
    [[ -f "$ric/rapid-client.node" ]] || { echo "aws-lambda-ric installed without its native addon" >&2; exit 1; }
    echo ready
}

setup_cli() {
    command -v python3 >/dev/null || { echo "skipped: no python3"; exit 3; }
    local pin
    pin="$(grep -E '^awscli==' "$here/../compat/python/requirements-cli.txt")"
    if [[ ! -x "$root/cli/bin/aws" ]] || ! "$root/cli/bin/aws" --version 2>&1 | grep -q "aws-cli/${pin#awscli==} "; then
        python3 -m venv "$root/cli"
        "$root/cli/bin/pip" install --quiet --disable-pip-version-check "$pin" >&2
    fi
    echo ready
}

run() {
    local address="$1" dir="$2" handler="$3"
    cd "$dir"
    exec "$root/bin/aws-lambda-rie" --runtime-interface-emulator-address "$address" \
        --runtime-api-address "${RIE_RUNTIME_API:-127.0.0.1:9001}" \
        "$root/venv/bin/python" -m awslambdaric "$handler"
}

run_node() {
    local address="$1" dir="$2" handler="$3"
    cd "$dir"
    # aws-lambda-ric finds the handler's file under LAMBDA_TASK_ROOT.
    export LAMBDA_TASK_ROOT="$dir"
    exec "$root/bin/aws-lambda-rie" --runtime-interface-emulator-address "$address" \
        --runtime-api-address "${RIE_RUNTIME_API:-127.0.0.1:9001}" \
        node "$root/node/node_modules/aws-lambda-ric/index.mjs" "$handler"
}

case "${1:-}" in
    setup) setup ;;
    setup-node) setup_node ;;
    setup-cli) setup_cli ;;
    run) shift; run "$@" ;;
    run-node) shift; run_node "$@" ;;
    *) echo "usage: $0 setup | setup-node | setup-cli | run ADDRESS DIR HANDLER | run-node ADDRESS DIR HANDLER" >&2; exit 2 ;;
esac
