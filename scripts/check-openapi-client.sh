#!/usr/bin/env bash
# The OpenAPI document as an iOS team uses it: swift-openapi-generator writes a client of the whole document
# (types and client, no filter), the client compiles, and a program on it signs up, logs in, sends a message
# and makes a transfer against a live server (Examples/OpenAPIClient). Needs a built `gatehouse`
# (swift build --package-path Server).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -d /opt/swift/usr/bin ]; then export PATH=/opt/swift/usr/bin:$PATH; fi

BIN="$(swift build --package-path Server --show-bin-path)/gatehouse"
EXAMPLE=Examples/OpenAPIClient
"$BIN" openapi --yaml > "$EXAMPLE/Sources/GatehouseOpenAPIClient/openapi.yaml"
swift build --package-path "$EXAMPLE"

WORK="$(mktemp -d)"
PORT="${OPENAPI_CLIENT_PORT:-18941}"
export DATABASE_URL="$WORK/client.sqlite" GATEHOUSE_PORT="$PORT" GATEHOUSE_LOG_LEVEL=error GATEHOUSE_BCRYPT_COST=4
"$BIN" serve > "$WORK/server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null; wait $SERVER 2>/dev/null; rm -rf "$WORK"' EXIT
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT/health" >/dev/null && break; kill -0 $SERVER 2>/dev/null || { cat "$WORK/server.log" >&2; exit 1; }; sleep 0.2; done

GATEHOUSE_URL="http://127.0.0.1:$PORT" GATEHOUSE_CLI="$BIN" "$(swift build --package-path "$EXAMPLE" --show-bin-path)/GatehouseOpenAPIClient"
