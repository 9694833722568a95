#!/usr/bin/env bash
# Starts a throwaway PostgreSQL (Debian's packages) for the tests on port 55432 and prints the
# POSTGRES_URL to use. Fails loudly when the server cannot start. `--stop` stops it and removes its data.
set -euo pipefail
PGPORT=${PGPORT:-55432}
PGDATA=${PGDATA:-/tmp/gatehouse-pg}
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
if [ -z "$PGBIN" ]; then
  echo "start-postgres: PostgreSQL is not installed (apt-get install -y postgresql)" >&2
  exit 1
fi
run_pg() { if [ "$(id -u)" = 0 ]; then (cd /tmp && su postgres -c "$*"); else bash -c "$*"; fi; }
if [ "${1:-}" = "--stop" ]; then
  if [ -f "$PGDATA/postmaster.pid" ]; then run_pg "$PGBIN/pg_ctl -D $PGDATA -w -m fast stop" >/dev/null; fi
  rm -rf "$PGDATA"
  echo "start-postgres: stopped the PostgreSQL on port $PGPORT and removed $PGDATA"
  exit 0
fi
if ! run_pg "$PGBIN/pg_isready -h 127.0.0.1 -p $PGPORT" >/dev/null 2>&1; then
  rm -rf "$PGDATA"
  mkdir -p "$PGDATA"
  if [ "$(id -u)" = 0 ]; then chown postgres "$PGDATA"; fi
  run_pg "$PGBIN/initdb -D $PGDATA -A trust -U postgres" >/dev/null
  run_pg "$PGBIN/pg_ctl -D $PGDATA -l $PGDATA/server.log -w -o \"-p $PGPORT -k /tmp -c max_connections=400 -c fsync=off -c listen_addresses=127.0.0.1\" start" >/dev/null \
    || { echo "start-postgres: PostgreSQL failed to start:" >&2; cat "$PGDATA/server.log" >&2; exit 1; }
fi
run_pg "$PGBIN/psql -h 127.0.0.1 -p $PGPORT -U postgres -tc \"SELECT 1 FROM pg_database WHERE datname='gatehouse_test'\"" | grep -q 1 \
  || run_pg "$PGBIN/createdb -h 127.0.0.1 -p $PGPORT -U postgres gatehouse_test"
echo "postgres://postgres@127.0.0.1:$PGPORT/gatehouse_test"
