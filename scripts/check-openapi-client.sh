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
. scripts/serve-for-check.sh
serve_for_check "$PORT"

GATEHOUSE_URL="http://127.0.0.1:$PORT" GATEHOUSE_CLI="$BIN" "$(swift build --package-path "$EXAMPLE" --show-bin-path)/GatehouseOpenAPIClient"
