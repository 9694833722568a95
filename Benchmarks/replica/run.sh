#!/usr/bin/env bash
# A read replica's effect on the primary under a read-heavy mix, in one run (docs/performance.md, "Read replicas"):
#
#   Benchmarks/replica/run.sh
#
# One Gatehouse instance (release build) on a fresh database of the PostgreSQL of POSTGRES_URL (else
# scripts/start-postgres.sh starts one), and a hot standby of that PostgreSQL (pg_basebackup, streaming). The same
# mix twice, first on the primary alone, then with GATEHOUSE_DATABASE_REPLICA_URLS: people search, chat lists, friends
# lists and older history pages read by READERS people, and messages sent by WRITERS others (a person who writes reads
# the primary for a while, so writers and readers are different people here, as most readers are at any moment).
# Prints per run: operations a second, p50/p99, and processor time per operation of the instance, the primary
# PostgreSQL and the replica (from /proc, each postmaster's own processes).
# Env: RATE (operations/s, 300), SECONDS_RUN (20), READERS (200), WRITERS (20), WRITE_SHARE (0.05).
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH=/opt/swift/usr/bin:$PATH
ulimit -n "$(ulimit -Hn)" || true
swift build --package-path Server -c release --product gatehouse >&2
BIN="$(swift build --package-path Server -c release --show-bin-path)/gatehouse"
VENV="$PWD/.build/bus-bench-venv"
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q "aiohttp==3.14.5" "websockets==17.4"
fi
if [ -z "${POSTGRES_URL:-}" ]; then POSTGRES_URL=$(bash scripts/start-postgres.sh); fi
PGDATA_PRIMARY=${PGDATA:-/tmp/gatehouse-pg}
exec "$VENV/bin/python" Benchmarks/replica/bench.py --bin "$BIN" --postgres "$POSTGRES_URL" --pgdata "$PGDATA_PRIMARY" \
  --rate "${RATE:-300}" --seconds "${SECONDS_RUN:-20}" --readers "${READERS:-200}" --writers "${WRITERS:-20}" \
  --write-share "${WRITE_SHARE:-0.05}"
