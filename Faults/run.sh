#!/usr/bin/env bash
# Fault harness (docs/reliability.md#faults): kill -9 under registration load and under message
# sends, a mail server that
# rejects or drops a quarter of its connections, a PostgreSQL restart under load, and two
# instances on one PostgreSQL. Exit status 0 only when every test passed.
#
#   bash Faults/run.sh                      # everything, on SQLite and PostgreSQL (about 2 min)
#   bash Faults/run.sh --only crash,mail    # some tests (crash, messages, mail, pg-restart, two-instances, ledger, ledger-faults, known, soak, fleet)
#   LEDGER_OPS=10000 bash Faults/run.sh --only ledger   # the wallet's ledger checker (docs/wallet.md, "The checker")
#   SOAK_SECONDS=600 bash Faults/run.sh --only soak   # the 10-minute mixed-load soak on each engine
#   FAULTS_ENGINES=sqlite bash Faults/run.sh  # without PostgreSQL
#   FAULTS_SEED=123 bash Faults/run.sh      # repeat a run's random choices (printed at the start)
#
# Needs a built `gatehouse` (swift build --package-path Server), python3 (standard library only: no venv, nothing to
# install) and, for PostgreSQL, Debian's postgresql package. It starts its own throwaway
# PostgreSQL on port 55433 (data in /tmp/gatehouse-pg-faults), which the restart test stops and
# starts, and stops it at the end; the one on 55432 is never touched. Ports 19200-19299.
set -euo pipefail
cd "$(dirname "$0")/.."
START=$(date +%s)

if [ -z "${GATEHOUSE_BIN:-}" ]; then
  BIN_DIR="$(swift build --package-path Server --show-bin-path 2>/dev/null || true)"
  GATEHOUSE_BIN="${BIN_DIR:-$PWD/Server/.build/debug}/gatehouse"
fi
if [ ! -x "$GATEHOUSE_BIN" ]; then
  echo "faults: no gatehouse binary at $GATEHOUSE_BIN (run swift build --package-path Server first)" >&2
  exit 1
fi
export GATEHOUSE_BIN

export FAULTS_PGPORT="${FAULTS_PGPORT:-55433}"
export FAULTS_PGDATA="${FAULTS_PGDATA:-/tmp/gatehouse-pg-faults}"
if [ "$FAULTS_PGPORT" = 55432 ]; then
  echo "faults: port 55432 is the shared test PostgreSQL; use another FAULTS_PGPORT" >&2
  exit 64
fi
ENGINES="${FAULTS_ENGINES:-sqlite,pg}"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/gatehouse-faults.XXXXXX")"
chmod 755 "$WORK"
export FAULTS_WORKDIR="$WORK"

run_pg() { if [ "$(id -u)" = 0 ]; then (cd /tmp && su postgres -c "$*"); else bash -c "$*"; fi; }
PG_STARTED=""
cleanup() {
  status=$?
  if [ -n "$PG_STARTED" ]; then
    PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    run_pg "$PGBIN/pg_ctl -D $FAULTS_PGDATA -w -m fast stop" >/dev/null 2>&1 || true
    rm -rf "$FAULTS_PGDATA" 2>/dev/null || true
    echo "faults: stopped the faults PostgreSQL on port $FAULTS_PGPORT and removed $FAULTS_PGDATA"
  fi
  if [ "$status" = 0 ]; then
    rm -rf "$WORK"
  else
    echo "faults: server logs and databases kept in $WORK"
  fi
  echo "faults: took $(( $(date +%s) - START ))s"
  exit "$status"
}
trap cleanup EXIT

if [[ ",$ENGINES," == *",pg,"* ]]; then
  if ! PGPORT="$FAULTS_PGPORT" PGDATA="$FAULTS_PGDATA" bash scripts/start-postgres.sh >/dev/null; then
    echo "faults: cannot start PostgreSQL on port $FAULTS_PGPORT (FAULTS_ENGINES=sqlite runs without it)" >&2
    exit 1
  fi
  PG_STARTED=1
  echo "faults: PostgreSQL on port $FAULTS_PGPORT (data $FAULTS_PGDATA)"
fi

python3 Faults/faults.py --engines "$ENGINES" "$@"
