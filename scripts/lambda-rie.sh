#!/usr/bin/env bash
# AWS's Lambda Runtime Interface Emulator and a Python runtime for it, for
# the Lambda event source mapping tests (tests/lambda.rs) and for anyone
# trying a handler by hand.
#
#   bash scripts/lambda-rie.sh setup
#       builds aws-lambda-rie from its Go module into scripts/.lambda/bin
#       (the version the Go module proxy names as @latest, unless
#       RIE_VERSION is set) and makes a venv in scripts/.lambda/venv with
#       awslambdaric and aws-lambda-powertools[parser] from PyPI. Prints
#       "ready", or "skipped: no Go" / "skipped: no python3" and exits 3.
#   bash scripts/lambda-rie.sh run ADDRESS DIR HANDLER
#       runs the emulator on ADDRESS (e.g. 127.0.0.1:9001) with the Python
#       handler HANDLER (module.function) from DIR; the Invoke API is then
#       http://ADDRESS/2015-03-31/functions/function/invocations.
#       AWS_LAMBDA_FUNCTION_TIMEOUT (seconds) is the handler's timeout;
#       RIE_RUNTIME_API (host:port, default 127.0.0.1:9001) is where the
#       emulator serves the Runtime API to its handler: give each emulator
#       running at once its own.
#
# Why the real emulator: it is what AWS's base images run, so the request
# it accepts and the answers it gives (errors, timeouts) are AWS's.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$here/.lambda"
module=github.com/aws/aws-lambda-runtime-interface-emulator

setup() {
    command -v go >/dev/null || { echo "skipped: no Go"; exit 3; }
    command -v python3 >/dev/null || { echo "skipped: no python3"; exit 3; }
    mkdir -p "$root/bin"
    if [[ ! -x "$root/bin/aws-lambda-rie" ]]; then
        local version="${RIE_VERSION:-$(go list -m -f '{{.Version}}' "$module@latest")}"
        env GOBIN="$root/bin" CGO_ENABLED=0 go install "$module/cmd/aws-lambda-rie@$version" >&2
        echo "$version" > "$root/bin/aws-lambda-rie.version"
    fi
    if [[ ! -x "$root/venv/bin/python" ]] || ! "$root/venv/bin/python" -c 'import awslambdaric, aws_lambda_powertools, pydantic' 2>/dev/null; then
        python3 -m venv "$root/venv"
        "$root/venv/bin/pip" install --quiet --disable-pip-version-check \
            awslambdaric 'aws-lambda-powertools[parser]' >&2
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

case "${1:-}" in
    setup) setup ;;
    run) shift; run "$@" ;;
    *) echo "usage: $0 setup | run ADDRESS DIR HANDLER" >&2; exit 2 ;;
esac
