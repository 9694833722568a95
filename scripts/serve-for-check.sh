# Sourced by the checks that need a live server (check-openapi-client.sh, check-sdk-guide.sh):
# `serve_for_check PORT` starts the built `gatehouse` on a fresh SQLite file in $WORK (which the caller
# made) and exports its settings, waits for /health, and stops it and removes $WORK when the calling script exits.
serve_for_check() {
  local port=$1
  BIN="${BIN:-$(swift build --package-path Server --show-bin-path)/gatehouse}"
  # Exported: the check's own calls of the CLI (`gatehouse wallet credit`) reach the same database.
  export DATABASE_URL="$WORK/check.sqlite" GATEHOUSE_PORT="$port" GATEHOUSE_LOG_LEVEL=error GATEHOUSE_BCRYPT_COST=4
  "$BIN" serve > "$WORK/server.log" 2>&1 &
  SERVER=$!
  trap 'kill $SERVER 2>/dev/null; wait $SERVER 2>/dev/null; rm -rf "$WORK"' EXIT
  # Up to 60 s: in CI it starts at a lower priority beside the fault tests.
  for _ in $(seq 1 300); do
    curl -sf "http://127.0.0.1:$port/health" >/dev/null && return 0
    kill -0 $SERVER 2>/dev/null || { cat "$WORK/server.log" >&2; exit 1; }
    sleep 0.2
  done
  echo "gatehouse did not answer on port $port" >&2
  exit 1
}
