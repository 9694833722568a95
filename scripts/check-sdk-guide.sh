#!/usr/bin/env bash
# The SDK guide as a newcomer uses it: every Swift sample of docs/sdk.md compiles in a package that adds the SDK as
# an app does, the manifest it shows loads, every client's methods are in its tables, and its quick start signs up,
# logs in, writes and lists chats against a live server (scripts/check-sdk-guide.py). Needs a built `gatehouse`
# (swift build --package-path Server).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -d /opt/swift/usr/bin ]; then export PATH=/opt/swift/usr/bin:$PATH; fi

BIN="$(swift build --package-path Server --show-bin-path)/gatehouse"
WORK="$(mktemp -d)"
PORT="${SDK_GUIDE_PORT:-18942}"
export DATABASE_URL="$WORK/guide.sqlite" GATEHOUSE_PORT="$PORT" GATEHOUSE_LOG_LEVEL=error GATEHOUSE_BCRYPT_COST=4
"$BIN" serve > "$WORK/server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null; wait $SERVER 2>/dev/null; rm -rf "$WORK"' EXIT
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT/health" >/dev/null && break; kill -0 $SERVER 2>/dev/null || { cat "$WORK/server.log" >&2; exit 1; }; sleep 0.2; done

python3 scripts/check-sdk-guide.py --work "$WORK/package" --server "http://127.0.0.1:$PORT"
