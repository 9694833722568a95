#!/usr/bin/env bash
# Idle WebSocket connections and LOGIN latency against a release build of Gatehouse.
#   Benchmarks/websocket-gateway/run.sh [CONNECTIONS]        (default 50000)
# Env: BCRYPT_COST (default 10; the setup logs in every connection once, so a low cost only
# shortens setup), LATENCY_WORKERS (32), LATENCY_SECONDS (10).
set -euo pipefail
cd "$(dirname "$0")/../.."
CONNECTIONS=${1:-50000}
export PATH=/opt/swift/usr/bin:$PATH
# One descriptor per connection on both sides: raise the limit as far as this machine allows.
ulimit -n "$(ulimit -Hn)" || true
echo "descriptor limit: $(ulimit -n) (hard $(ulimit -Hn))"

swift build --package-path Server -c release --product gatehouse >/dev/null
BIN=$(swift build --package-path Server -c release --show-bin-path)/gatehouse
VENV=${VENV:-/tmp/gatehouse-bench-venv}
[ -x "$VENV/bin/python" ] || { python3 -m venv "$VENV"; "$VENV/bin/pip" install --quiet websockets; }

WORK=$(mktemp -d)
PORT=${PORT:-18080}
( cd "$WORK" && GATEHOUSE_PORT=$PORT GATEHOUSE_HOST=0.0.0.0 GATEHOUSE_ALLOW_DEV_ON_NETWORK=true GATEHOUSE_LOG_LEVEL=warning \
  GATEHOUSE_HTTP_MAX_CONNECTIONS_PER_ADDRESS=1000000 \
  GATEHOUSE_BCRYPT_COST=${BCRYPT_COST:-10} GATEHOUSE_WS_IDLE_TIMEOUT_SECONDS=7200 GATEHOUSE_WS_PING_SECONDS=600 \
  GATEHOUSE_WS_MAX_CONNECTIONS=1000000 GATEHOUSE_LOGIN_FAILURES_PER_IP=1000000 GATEHOUSE_LOGIN_FAILURES_PER_ACCOUNT=10000 \
  exec ${SERVER_WRAPPER:-} "$BIN" serve > server.log 2>&1 ) &
SERVER=$!
trap 'kill $SERVER 2>/dev/null; rm -rf "$WORK"' EXIT
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT/health" >/dev/null && break; sleep 0.2; done

# One account to log in with, signed up by email (a confirmed address: the gateway's login name).
curl -sf -X POST "http://127.0.0.1:$PORT/v1/signup/code" -H 'Content-Type: application/json' \
  -d '{"email":"bench@example.com"}' >/dev/null
CODE=$(curl -sf "http://127.0.0.1:$PORT/dev/outbox?to=bench%40example.com" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["code"])')
curl -sf -X POST "http://127.0.0.1:$PORT/v1/signup" -H 'Content-Type: application/json' \
  -d "{\"email\":\"bench@example.com\",\"code\":\"$CODE\",\"password\":\"bench-1!\"}" >/dev/null

SERVER_PID=$(pgrep -P $SERVER -f "$BIN" || echo $SERVER)
"$VENV/bin/python" Benchmarks/websocket-gateway/idle_connections.py --url "ws://127.0.0.1:$PORT/customer-gateway/customer" \
  --server-pid "$SERVER_PID" --connections "$CONNECTIONS" --email bench@example.com --password 'bench-1!' \
  --latency-workers "${LATENCY_WORKERS:-32}" --latency-seconds "${LATENCY_SECONDS:-10}"
