# Sourced by run.sh and startup.sh: make_project DIST makes a fresh npm project
# in a temp dir (PROJECT) with the built tarballs from DIST and the pinned test
# tools installed, and the sample files copied in.
# Pinned tool versions (vitest 3 runs on Node 20; vite 8 may not).
AWS_SDK_SQS=3.1169.0
VITEST=3.2.4
VITE=6.3.5
TYPESCRIPT=5.8.3
JEST=29.7.0

example_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
js_dir=$(dirname "$example_dir")

make_project() {
  local dist
  dist=$(cd "$1" && pwd)
  local platform_tgz=("$dist"/retsu-sqs-linux-x64-*.tgz)
  if [ ! -f "${platform_tgz[0]}" ] || [ ${#platform_tgz[@]} -ne 1 ]; then
    echo "no single retsu-sqs-linux-x64-VERSION.tgz in $dist" >&2
    return 1
  fi
  VERSION=$(basename "${platform_tgz[0]}" .tgz)
  VERSION=${VERSION#retsu-sqs-linux-x64-}
  if [ ! -f "$dist/retsu-sqs-$VERSION.tgz" ]; then
    echo "no retsu-sqs-$VERSION.tgz in $dist" >&2
    return 1
  fi
  PROJECT=$(mktemp -d "${TMPDIR:-/tmp}/retsu-js-example.XXXXXX")
  export npm_config_cache="$js_dir/.npm-cache"
  export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
  cp -R "$example_dir/test" "$example_dir"/*.mjs \
    "$example_dir"/*.cjs "$example_dir"/types-check.* "$example_dir"/tsconfig.json \
    "$PROJECT/"
  (
    cd "$PROJECT"
    npm init -y >/dev/null
    npm install --prefer-offline --no-audit --no-fund --loglevel=error \
      "$dist/retsu-sqs-linux-x64-$VERSION.tgz" "$dist/retsu-sqs-$VERSION.tgz"
    npm install --prefer-offline --no-audit --no-fund --loglevel=error --save-dev --save-exact \
      "@aws-sdk/client-sqs@$AWS_SDK_SQS" "vitest@$VITEST" "vite@$VITE" "typescript@$TYPESCRIPT" "jest@$JEST"
  )
  echo "fresh project $PROJECT: retsu-sqs $VERSION from $dist"
}
