#!/usr/bin/env bash
# A throwaway PostgreSQL for the tests (PostgreSQL 15 or newer from
# Debian's packages, installed when missing):
#
#   scripts/postgres.sh start DIR    initdb in DIR, start it on a free
#                                    loopback port; prints the admin URL
#   scripts/postgres.sh stop DIR     stop it (the directory stays)
#   scripts/postgres.sh restart DIR  stop and start again, same port
#   scripts/postgres.sh run CMD…     start one in a temporary directory,
#                                    run CMD with RETSU_TEST_POSTGRES set
#                                    to its URL, stop it and remove it
#
# The server runs as the `postgres` user (PostgreSQL refuses root), with
# trust authentication on loopback only, and fsync off: the tests kill
# Retsu, never the machine, and what they check is what PostgreSQL was
# handed. PG_FSYNC=on keeps PostgreSQL's fsync (the benchmarks of
# `--durability full` need it).
set -euo pipefail

find_bin() {
  local d
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$d/initdb" ]; then echo "$d"; return 0; fi
  done
  return 1
}

ensure_installed() {
  if find_bin >/dev/null; then return 0; fi
  echo "scripts/postgres.sh: installing PostgreSQL from Debian's packages" >&2
  if [ "$(id -u)" -ne 0 ]; then
    echo "scripts/postgres.sh: PostgreSQL is missing and only root can install it (apt-get install postgresql)" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq postgresql >&2
  find_bin >/dev/null
}

as_pg() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start() {
  local dir=$1 bin port
  ensure_installed
  bin=$(find_bin)
  mkdir -p "$dir"
  if [ "$(id -u)" -eq 0 ]; then chown postgres: "$dir"; fi
  chmod 700 "$dir"
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    as_pg "$bin/initdb" -D "$dir/data" -U postgres -A trust --no-sync -E UTF8 >"$dir/initdb.log" 2>&1 \
      || { cat "$dir/initdb.log" >&2; exit 1; }
    port=$(free_port)
    echo "$port" >"$dir/port"
    if [ "$(id -u)" -eq 0 ]; then chown postgres: "$dir/port"; fi
  fi
  port=$(cat "$dir/port")
  as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=${PG_FSYNC:-off} -c full_page_writes=${PG_FSYNC:-off} -c max_connections=200" \
    start >/dev/null || { tail -20 "$dir/server.log" >&2; exit 1; }
  echo "postgres://postgres@127.0.0.1:$port/postgres"
}

stop() {
  local dir=$1 bin
  bin=$(find_bin)
  [ -f "$dir/data/postmaster.pid" ] || return 0
  as_pg "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 60 stop >/dev/null
}

case "${1:-}" in
  start) start "$2" ;;
  stop) stop "$2" ;;
  restart) stop "$2"; start "$2" ;;
  run)
    shift
    dir=$(mktemp -d /tmp/retsu-pg.XXXXXX)
    trap 'stop "$dir" || true; rm -rf "$dir"' EXIT
    url=$(start "$dir")
    echo "scripts/postgres.sh: PostgreSQL at $url" >&2
    RETSU_TEST_POSTGRES=$url RETSU_TEST_POSTGRES_DIR=$dir "$@"
    ;;
  *)
    echo "usage: scripts/postgres.sh start DIR | stop DIR | restart DIR | run CMD…" >&2
    exit 2
    ;;
esac
