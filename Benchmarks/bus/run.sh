#!/usr/bin/env bash
# The event bus between instances, PostgreSQL's LISTEN/NOTIFY against Redis, in one run:
#
#   Benchmarks/bus/run.sh
#
# Three Gatehouse instances (release build) on one PostgreSQL database, each with realtime sockets of its own;
# messages sent through all three at a steady rate, each delivered to a socket on another instance than the one it
# was sent through, so every delivery crosses the bus. Run once with GATEHOUSE_EVENT_BUS=database and once with a
# local redis-server, each on a fresh database. Prints per bus: deliveries per second, delivery p50/p99 (send to
# frame), and processor time per delivered message of the three instances, PostgreSQL and Redis (from /proc).
# Env: PAIRS (300 people talking in pairs), RATE (messages/s, 600), SECONDS_RUN (20), POSTGRES_URL (else
# scripts/start-postgres.sh starts one).
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH=/opt/swift/usr/bin:$PATH
ulimit -n "$(ulimit -Hn)" || true
if ! command -v redis-server >/dev/null; then
  if [ "$(id -u)" = 0 ]; then apt-get install -y redis-server >/dev/null; else sudo apt-get install -y redis-server >/dev/null; fi
fi
swift build --package-path Server -c release --product gatehouse >&2
BIN="$(swift build --package-path Server -c release --show-bin-path)/gatehouse"
VENV="$PWD/.build/bus-bench-venv"
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q "aiohttp==3.14.5" "websockets==17.4"
fi
if [ -z "${POSTGRES_URL:-}" ]; then POSTGRES_URL=$(bash scripts/start-postgres.sh); fi
exec "$VENV/bin/python" Benchmarks/bus/bench.py --bin "$BIN" --postgres "$POSTGRES_URL" \
  --pairs "${PAIRS:-300}" --rate "${RATE:-600}" --seconds "${SECONDS_RUN:-20}"
