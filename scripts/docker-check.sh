#!/usr/bin/env bash
# Checks the container image and the compose file as far as a machine
# without a container registry allows (scripts/test.sh calls this):
#
#   1. installs Debian's podman and docker-compose if missing (apt-get);
#   2. builds the static binary on the host (+crt-static, x86_64 gnu);
#   3. builds the Dockerfile's runtime stage from it with podman
#      (--build-arg BINARY=prebuilt: FROM scratch + COPY, no registry);
#   4. checks the image: size under 12.25 MiB, exactly the binary and /data,
#      non-root user, port, environment, volume, HEALTHCHECK;
#   5. runs it: `podman run` if this machine allows; otherwise the image's
#      own root filesystem (podman image mount) under unshare + chroot, on
#      loopback, as the image's user and with the image's environment;
#      then probes it with the image's HEALTHCHECK command and an SQS call;
#   6. validates docker-compose.yml with docker-compose config (Debian's
#      podman-compose 1.0.3 has no `config`, and turns an exec-form
#      healthcheck into `/bin/sh -c`, which a scratch image lacks).
#
# What it cannot do here (pull the official Rust image for the build stage,
# pull amazon/aws-cli for compose's client) it says, loudly, at the end.
# Exit status: 0 only when every check above passed. A machine where the
# checks cannot run at all (no root, no apt-get, not x86_64) fails with an
# explanation, unless DOCKER_CHECK_OPTIONAL=1, which turns that into a
# loud warning and exit 0.
set -euo pipefail
cd "$(dirname "$0")/.."

IMAGE=localhost/retsu:check
# The budget (BENCHMARKS.md, "Image and package size"): 12 MiB and 256 KiB.
LIMIT=$((12 * 1024 * 1024 + 256 * 1024))
TARGET=x86_64-unknown-linux-gnu
BIN=target/$TARGET/release/retsu
WORK=$(mktemp -d /tmp/retsu-docker-check.XXXXXX)
SERVER_PID=
CONTAINER=
EXERCISED=()
NOT_EXERCISED=()

cleanup() {
  if [ -n "$SERVER_PID" ]; then
    # The server first: chroot --userspec clears unshare's --kill-child
    # death signal, and unshare itself ignores SIGTERM.
    kill -KILL $(cat "/proc/$SERVER_PID/task/$SERVER_PID/children" 2>/dev/null) 2>/dev/null || true
    kill -KILL "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  if [ -n "$CONTAINER" ]; then podman rm -f "$CONTAINER" >/dev/null 2>&1 || true; fi
  podman image unmount "$IMAGE" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

say() { echo "== docker-check: $*"; }
fail() { echo "!! docker-check FAILED: $*" >&2; exit 1; }
cannot() {
  echo "!!" >&2
  echo "!! docker-check CANNOT RUN on this machine: $*" >&2
  echo "!! The image and compose file were NOT checked." >&2
  echo "!!" >&2
  if [ "${DOCKER_CHECK_OPTIONAL:-0}" = 1 ]; then exit 0; fi
  exit 1
}

# ---------------------------------------------------------------- 1. tools
[ "$(uname -m)" = x86_64 ] || cannot "the image is built for x86_64; this is $(uname -m)"
need=()
command -v podman >/dev/null || need+=(podman)
command -v docker-compose >/dev/null || need+=(docker-compose)
command -v unshare >/dev/null || need+=(util-linux)
command -v curl >/dev/null || need+=(curl)
if [ ${#need[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || cannot "needs root to install ${need[*]} with apt-get (or install them first)"
  command -v apt-get >/dev/null || cannot "no apt-get to install ${need[*]}"
  say "installing ${need[*]} (Debian packages)"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" uidmap slirp4netns fuse-overlayfs >/dev/null
fi
[ "$(id -u)" = 0 ] || cannot "podman image mount and chroot need root"

# ---------------------------------------------------------------- 2. binary
say "building the static binary ($TARGET, +crt-static, symbols stripped)"
scripts/build-static.sh "$TARGET"
file_out=$(file -b "$BIN" 2>/dev/null || true)
if ldd "$BIN" >/dev/null 2>&1 && ! ldd "$BIN" 2>&1 | grep -q "statically linked"; then
  fail "$BIN is dynamically linked: $(ldd "$BIN" | tr '\n' ' ')"
fi
say "binary: $(stat -c %s "$BIN") bytes ${file_out:+($file_out)}"
EXERCISED+=("static binary built on the host with -C target-feature=+crt-static ($(stat -c %s "$BIN") bytes, no dynamic dependencies)")

# ---------------------------------------------------------------- 3. image
say "building the runtime stage with podman (BINARY=prebuilt, no registry)"
# A context holding only what the prebuilt stage copies.
mkdir -p "$WORK/context/docker/prebuilt/data"
cp "$BIN" "$WORK/context/docker/prebuilt/retsu"
podman build --quiet --format docker --build-arg BINARY=prebuilt \
  -f Dockerfile -t "$IMAGE" "$WORK/context" >/dev/null
EXERCISED+=("Dockerfile runtime stage built by podman from the host binary (--build-arg BINARY=prebuilt)")

# ---------------------------------------------------------------- 4. image checks
size=$(podman image inspect --format '{{.Size}}' "$IMAGE")
say "image size: $size bytes (limit $LIMIT)"
[ "$size" -lt "$LIMIT" ] || fail "image is $size bytes, over 12.25 MiB"
inspect() { podman image inspect --format "$1" "$IMAGE"; }
[ "$(inspect '{{.Config.User}}')" = "65532:65532" ] || fail "user is '$(inspect '{{.Config.User}}')', want 65532:65532"
inspect '{{json .Config.ExposedPorts}}' | grep -q '"9324/tcp"' || fail "9324/tcp not exposed"
inspect '{{json .Config.Env}}' | grep -q '"RETSU_HOST=0.0.0.0"' || fail "RETSU_HOST=0.0.0.0 not set"
inspect '{{json .Config.Volumes}}' | grep -q '"/data"' || fail "/data is not a volume"
[ "$(inspect '{{json .Config.Entrypoint}}')" = '["/retsu"]' ] || fail "entrypoint is $(inspect '{{json .Config.Entrypoint}}')"
health_json=$(inspect '{{json .Config.Healthcheck.Test}}')
[ "$health_json" = '["CMD","/retsu","health"]' ] || fail "HEALTHCHECK is $health_json"

ROOT=$(podman image mount "$IMAGE")
listing=$(cd "$ROOT" && find . -mindepth 1 | sort | tr '\n' ' ')
say "image contents: $listing"
[ "$listing" = "./data ./retsu " ] || fail "unexpected image contents: $listing"
[ "$(stat -c %u:%g "$ROOT/data")" = "65532:65532" ] || fail "/data is owned by $(stat -c %u:%g "$ROOT/data")"
cmp -s "$ROOT/retsu" "$BIN" || fail "/retsu is not the binary just built"
EXERCISED+=("image checks: $size bytes (< 12.25 MiB); contents exactly /retsu and /data (owned 65532:65532); USER 65532:65532; EXPOSE 9324; RETSU_HOST=0.0.0.0; VOLUME /data; HEALTHCHECK [\"CMD\",\"/retsu\",\"health\"]")

# ---------------------------------------------------------------- 5. run it
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
ENDPOINT="http://127.0.0.1:$PORT"
# The image's environment, as podman would set it, then the port.
mapfile -t IMAGE_ENV < <(podman image inspect --format '{{range .Config.Env}}{{println .}}{{end}}' "$IMAGE" | sed '/^$/d')

# As docker-compose.yml runs it: docker/retsu.toml as RETSU_CONFIG.
CONFIG_IN_IMAGE=/etc/retsu/retsu.toml
sqs_call() {
  local out url
  out=$(curl -sS --max-time 5 -d 'Action=GetQueueUrl&QueueName=jobs' "$ENDPOINT/")
  echo "$out" | grep -q "<QueueUrl>http://127.0.0.1:$PORT/000000000000/jobs</QueueUrl>" \
    || fail "GetQueueUrl for the configured queue answered: $out"
  # What compose's client sees: Retsu reached as retsu:9324 returns URLs
  # on retsu:9324, and those URLs work (curl maps the name to loopback).
  out=$(curl -sS --max-time 5 --connect-to "retsu:9324:127.0.0.1:$PORT" \
    -d 'Action=GetQueueUrl&QueueName=jobs' "http://retsu:9324/")
  url=$(echo "$out" | sed -n 's:.*<QueueUrl>\(.*\)</QueueUrl>.*:\1:p')
  [ "$url" = "http://retsu:9324/000000000000/jobs" ] || fail "queue URL for a sibling container: $out"
  out=$(curl -sS --max-time 5 --connect-to "retsu:9324:127.0.0.1:$PORT" \
    -d 'Action=SendMessage&MessageBody=hello' "$url")
  echo "$out" | grep -q "<MessageId>" || fail "SendMessage to $url answered: $out"
  out=$(curl -sS --max-time 5 -d 'Action=GetQueueAttributes&AttributeName.1=RedrivePolicy&AttributeName.2=ApproximateNumberOfMessages' \
    "$ENDPOINT/000000000000/jobs")
  echo "$out" | grep -q "jobs-dlq" || fail "jobs has no dead-letter queue: $out"
  echo "$out" | grep -q "<Value>1</Value>" || fail "the message did not arrive: $out"
}
wait_healthy() { # $1: command probing health
  for _ in $(seq 1 100); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  return 1
}

ran=
run_log="$WORK/podman-run.log"
if CONTAINER=$(timeout 60 podman run -d --rm -p "127.0.0.1:$PORT:9324" \
    -v "$PWD/docker/retsu.toml:$CONFIG_IN_IMAGE:ro" -e "RETSU_CONFIG=$CONFIG_IN_IMAGE" \
    "$IMAGE" 2>"$run_log"); then
  if wait_healthy "$BIN" health --endpoint "$ENDPOINT"; then
    podman healthcheck run "$CONTAINER" >/dev/null || fail "podman healthcheck run failed"
    sqs_call
    ran="podman run"
    EXERCISED+=("podman run -p 127.0.0.1:$PORT:9324 with docker/retsu.toml as RETSU_CONFIG: the image's HEALTHCHECK (podman healthcheck run), the configured queues, queue URLs for a client reaching it as retsu:9324")
  else
    echo "podman run started but never answered: $(podman logs "$CONTAINER" 2>&1 | tail -5)" >>"$run_log"
  fi
  podman rm -f "$CONTAINER" >/dev/null 2>&1 || true
  CONTAINER=
fi
if [ -z "$ran" ]; then
  say "podman run does not work here; falling back to the image's root filesystem under unshare + chroot"
  sed 's/^/   podman run: /' "$run_log" | tail -5
  NOT_EXERCISED+=("podman run (on this machine: $(tail -1 "$run_log" | cut -c1-200))")
  # A copy, so the run cannot write into the image's layers, with the
  # device nodes a container runtime provides (getrandom falls back to
  # /dev/urandom in a static binary).
  mkdir -p "$WORK/rootfs"
  cp -a "$ROOT/." "$WORK/rootfs/"
  mkdir -p "$WORK/rootfs/dev"
  for d in null zero full random urandom; do touch "$WORK/rootfs/dev/$d"; done
  mkdir -p "$WORK/rootfs/etc/retsu"
  cp docker/retsu.toml "$WORK/rootfs$CONFIG_IN_IMAGE"
  # Runs a command in the image's root, as its user, with its environment
  # (plus $@'s leading VAR=value words), in a private mount namespace.
  in_image() {
    env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin "${IMAGE_ENV[@]}" "$@"
  }
  CHROOT_SCRIPT='for d in null zero full random urandom; do mount --bind "/dev/$d" "$0/dev/$d"; done; exec chroot --userspec=65532:65532 "$0" "$@"'
  # (env, not in_image: $! must be unshare itself, whose child is /retsu.)
  env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin "${IMAGE_ENV[@]}" RETSU_CONFIG="$CONFIG_IN_IMAGE" RETSU_HOST=127.0.0.1 RETSU_PORT="$PORT" \
    unshare --mount --pid --fork --kill-child sh -c "$CHROOT_SCRIPT" "$WORK/rootfs" /retsu \
    >"$WORK/server.log" 2>&1 &
  SERVER_PID=$!
  # The HEALTHCHECK command itself, inside the same root, as the image's user.
  healthcheck() {
    in_image RETSU_CONFIG="$CONFIG_IN_IMAGE" RETSU_PORT="$PORT" timeout 10 \
      unshare --mount sh -c "$CHROOT_SCRIPT" "$WORK/rootfs" /retsu health
  }
  wait_healthy healthcheck || fail "the image's root filesystem did not become healthy: $(tail -5 "$WORK/server.log")"
  sqs_call
  grep -q '"message":"retsu ready".*"queues":2' "$WORK/server.log" \
    || fail "no JSON start-up line with the file's 2 queues: $(cat "$WORK/server.log")"
  # SIGTERM to the server (PID 1 of its namespace); unshare passes on its status.
  child=$(cat "/proc/$SERVER_PID/task/$SERVER_PID/children")
  kill -TERM $child
  status=0
  timeout 15 tail --pid="$SERVER_PID" -f /dev/null || status=$?
  [ "$status" = 0 ] || fail "the server did not stop within 15 s of SIGTERM"
  wait "$SERVER_PID" || fail "the server did not exit 0 on SIGTERM: $(tail -3 "$WORK/server.log")"
  SERVER_PID=
  ran="chroot"
  EXERCISED+=("the image's root filesystem (podman image mount) run under unshare --mount --pid + chroot as 65532:65532 with the image's environment and docker/retsu.toml as RETSU_CONFIG (as compose mounts it), on loopback: its HEALTHCHECK command (/retsu health) answered ok; the configured queues exist with their DLQ; a URL returned to a client reaching it as retsu:9324 is http://retsu:9324/... and a SendMessage to it works; JSON start-up line; exit 0 on SIGTERM")
fi

# ---------------------------------------------------------------- 6. compose
say "validating docker-compose.yml"
docker-compose -f docker-compose.yml config -q || fail "docker-compose config rejected docker-compose.yml"
EXERCISED+=("docker-compose.yml validated by docker-compose $(docker-compose version --short 2>/dev/null) config")
compose_out=$(docker-compose -f docker-compose.yml config)
for needle in "RETSU_CONFIG: /etc/retsu/retsu.toml" "docker/retsu.toml:/etc/retsu/retsu.toml:ro" \
    "retsu-data:/data" "AWS_ENDPOINT_URL: http://retsu:9324" "- /retsu" "condition: service_healthy"; do
  echo "$compose_out" | grep -qF -- "$needle" || fail "docker-compose config lacks $needle"
done
EXERCISED+=("docker-compose.yml's resolved form has the config mount, the named /data volume, the exec-form healthcheck and the client's http://retsu:9324")
"$BIN" check-config docker/retsu.toml >/dev/null || fail "docker/retsu.toml does not pass check-config"
EXERCISED+=("docker/retsu.toml (the compose file's config) passes retsu check-config")

NOT_EXERCISED+=("the Dockerfile's build stage (FROM docker.io/library/rust): no container registry reachable here")
NOT_EXERCISED+=("docker compose up: its client image (amazon/aws-cli) and the build stage need a registry; the sibling-container client is therefore not run here")

echo
echo "== docker-check: PASSED. Exercised here:"
for e in "${EXERCISED[@]}"; do echo "   + $e"; done
echo "== docker-check: NOT exercised on this machine:"
for n in "${NOT_EXERCISED[@]}"; do echo "   - $n"; done
