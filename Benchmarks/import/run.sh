#!/usr/bin/env bash
# `gatehouse accounts import` over a generated file, against the floor of writing the same rows without Gatehouse:
#
#   Benchmarks/import/run.sh                        # 1,000,000 rows, SQLite and PostgreSQL
#   ROWS=100000 Benchmarks/import/run.sh --engines sqlite
#
# Builds gatehouse in release mode (BIN= to use another build), writes ROWS JSON lines (an email, a verified flag, a first
# name, an external id and one bcrypt hash made by Python's bcrypt, as an export from another system has), imports them
# into a freshly migrated database and prints wall time, processor time per row (user + system from /proc, via
# /usr/bin/time) and peak memory. The floor is the same rows written into the same migrated `accounts` table by the
# engine's own bulk path — Python's sqlite3 `executemany` in transactions of 100, PostgreSQL's `COPY` — with nothing
# checked, no audit row, no people index: the ratio says what the import's checks and bookkeeping cost over the write.
set -euo pipefail
cd "$(dirname "$0")/../.."
ENGINES="sqlite postgres"
while [ $# -gt 0 ]; do
  case "$1" in
    --engines) ENGINES="${2//,/ }"; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 64 ;;
  esac
done
ROWS=${ROWS:-1000000}
export PATH=/opt/swift/usr/bin:$PATH
need() { command -v "$1" >/dev/null || { if [ "$(id -u)" = 0 ]; then apt-get install -y "$2" >/dev/null; else sudo apt-get install -y "$2" >/dev/null; fi; }; }
need /usr/bin/time time
PY=${PYTHON:-.build/test-venv/bin/python3}
[ -x "$PY" ] || PY=python3
"$PY" -c "import bcrypt" 2>/dev/null || { echo "needs Python's bcrypt (scripts/test.sh makes .build/test-venv with it)" >&2; exit 69; }
if [ -z "${BIN:-}" ]; then
  swift build --package-path Server -c release --product gatehouse >&2
  BIN="$(swift build --package-path Server -c release --show-bin-path)/gatehouse"
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

"$PY" - "$ROWS" > "$WORK/users.jsonl" <<'PY'
import bcrypt, json, sys
h = bcrypt.hashpw(b"old-Secret-7!", bcrypt.gensalt(rounds=4)).decode()
out = sys.stdout
for i in range(int(sys.argv[1])):
    out.write(json.dumps({"externalId": f"u{i}", "email": f"user{i}@example.com", "emailVerified": True, "firstName": "User", "passwordHash": h}) + "\n")
PY
echo "file: $ROWS rows, $(stat -c %s "$WORK/users.jsonl") bytes"

# measure NAME COMMAND…: wall seconds, processor seconds (user + system) and peak RSS of the command, from /usr/bin/time.
measure() {
  local name=$1; shift
  /usr/bin/time -f "%e %U %S %M" -o "$WORK/$name.time" "$@" > "$WORK/$name.out" 2> "$WORK/$name.err" || { tail -20 "$WORK/$name.err" >&2; exit 1; }
  read -r wall user sys rss < "$WORK/$name.time"
  awk -v n="$name" -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" -v rows="$ROWS" 'BEGIN {
    printf "%-22s %8.1f s wall  %8.0f rows/s  %7.1f µs processor/row  peak RSS %6.1f MB\n", n, w, rows / w, (u + s) * 1e6 / rows, r / 1024 }'
  echo "$wall $user $sys $rss" > "$WORK/$name.result"
}
ratio() {  # ratio A B [wall]: A's wall time over B's, and processor time per row over B's (unless "wall": the work is elsewhere)
  read -r wa ua sa _ < "$WORK/$1.result"; read -r wb ub sb _ < "$WORK/$2.result"
  awk -v a="$1" -v b="$2" -v wa="$wa" -v wb="$wb" -v ca="$(echo "$ua + $sa" | bc -l)" -v cb="$(echo "$ub + $sb" | bc -l)" -v only="${3:-}" 'BEGIN {
    if (only == "wall") printf "ratio %s / %s: wall %.2f×\n", a, b, wa / wb
    else printf "ratio %s / %s: wall %.2f×, processor %.2f×\n", a, b, wa / wb, (cb > 0 ? ca / cb : 0) }'
}
need bc bc

for engine in $ENGINES; do
  case "$engine" in
    sqlite)
      export DATABASE_URL="$WORK/gatehouse.sqlite"
      "$BIN" migrate > "$WORK/migrate.log" 2>&1
      cp "$DATABASE_URL" "$WORK/floor.sqlite"
      GATEHOUSE_LOG_LEVEL=warning measure sqlite-gatehouse "$BIN" accounts import "$WORK/users.jsonl" --json
      tail -c 200 "$WORK/sqlite-gatehouse.out"; echo
      measure sqlite-floor "$PY" - "$WORK/floor.sqlite" "$WORK/users.jsonl" <<'PY'
import json, sqlite3, sys, uuid, time
db = sqlite3.connect(sys.argv[1])
now = time.time()
batch = []
def flush():
    with db:
        db.executemany("INSERT INTO accounts (id, email, email_confirmed_at, first_name, password_hash, external_id, locale, created_at, updated_at)"
                       " VALUES (?, ?, ?, ?, ?, ?, 'en', ?, ?)", batch)
    batch.clear()
for line in open(sys.argv[2]):
    r = json.loads(line)
    batch.append((uuid.uuid4().bytes, r["email"], now, r["firstName"], r["passwordHash"], r["externalId"], now, now))
    if len(batch) == 100: flush()
flush()
PY
      ratio sqlite-gatehouse sqlite-floor
      unset DATABASE_URL ;;
    postgres)
      need psql postgresql-client
      PG=${POSTGRES_URL:-$(bash scripts/start-postgres.sh)}
      PG_PORT=$(echo "$PG" | sed -E 's#.*:([0-9]+)/.*#\1#')
      ADMIN="postgres://postgres@127.0.0.1:$PG_PORT/postgres"
      for db in import_bench import_floor; do
        psql -q "$ADMIN" -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null
        DATABASE_URL="postgres://postgres@127.0.0.1:$PG_PORT/$db" "$BIN" migrate > "$WORK/migrate.log" 2>&1
      done
      DATABASE_URL="postgres://postgres@127.0.0.1:$PG_PORT/import_bench" GATEHOUSE_LOG_LEVEL=warning \
        measure postgres-gatehouse "$BIN" accounts import "$WORK/users.jsonl" --json
      tail -c 200 "$WORK/postgres-gatehouse.out"; echo
      "$PY" - "$WORK/users.jsonl" > "$WORK/floor.csv" <<'PY'
import csv, json, sys, uuid
w = csv.writer(sys.stdout)
for line in open(sys.argv[1]):
    r = json.loads(line)
    w.writerow((uuid.uuid4(), r["email"], "2026-01-01 00:00:00", r["firstName"], r["passwordHash"], r["externalId"], "en", "2026-01-01 00:00:00", "2026-01-01 00:00:00"))
PY
      measure postgres-floor psql -q "postgres://postgres@127.0.0.1:$PG_PORT/import_floor" -c \
        "\\copy accounts (id, email, email_confirmed_at, first_name, password_hash, external_id, locale, created_at, updated_at) FROM '$WORK/floor.csv' CSV"
      echo "(the floor's work is PostgreSQL's, in neither process's count: the wall times compare)"
      ratio postgres-gatehouse postgres-floor wall
      psql -q "$ADMIN" -c "DROP DATABASE import_bench" -c "DROP DATABASE import_floor" >/dev/null ;;
    *) echo "unknown engine $engine" >&2; exit 64 ;;
  esac
done
