#!/usr/bin/env bash
# Gatehouse HTTP benchmarks (authenticated read vs plaintext vs the bare Hummingbird route vs peers, with the
# processor time per request read from /proc; login vs the bcrypt bound, registration end to end, start-up), one command:
#
#   Benchmarks/http/run.sh                          # everything, SQLite and PostgreSQL, with peers
#   Benchmarks/http/run.sh --engines sqlite --only read --peers none --runs 1
#
# Builds gatehouse in release mode, installs wrk (Debian) when missing, starts a throwaway
# PostgreSQL (scripts/start-postgres.sh) unless POSTGRES_URL is set, and sets up the peers
# (Benchmarks/peers/peer.sh) from PyPI. Options are bench.py's (--help).
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v wrk >/dev/null; then
  if [ "$(id -u)" = 0 ]; then apt-get install -y wrk >/dev/null; else sudo apt-get install -y wrk >/dev/null; fi
fi
swift build --package-path Server -c release --product gatehouse >&2
# The floor: a bare Hummingbird route from the same resolved packages and flags.
swift build --package-path Server -c release --product http-floor >&2
BIN_DIR="$(swift build --package-path Server -c release --show-bin-path)"
BIN="$BIN_DIR/gatehouse"
if [[ " $* " != *" --engines sqlite "* ]] && [ -z "${POSTGRES_URL:-}" ]; then
  POSTGRES_URL=$(bash scripts/start-postgres.sh)
  export POSTGRES_URL
fi
PEERS=allauth,fastapi-users
ARGS=("$@")
for ((i = 0; i < ${#ARGS[@]}; i++)); do [ "${ARGS[$i]}" = --peers ] && PEERS="${ARGS[$((i + 1))]}"; done
if [ "$PEERS" != none ]; then
  for peer in ${PEERS//,/ }; do bash Benchmarks/peers/peer.sh setup "$peer" >&2; done
fi
mkdir -p .build/bench-results
exec python3 Benchmarks/http/bench.py --binary "$BIN" --floor "$BIN_DIR/http-floor" --json ".build/bench-results/http-$(date -u +%Y%m%dT%H%M%SZ).json" "$@"
