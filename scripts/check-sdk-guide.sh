#!/usr/bin/env bash
# The SDK guide as a newcomer uses it: every Swift sample of docs/sdk.md compiles in a package that adds the SDK as
# an app does, the manifest it shows loads, every client's methods are in its tables, and its quick start signs up,
# logs in, writes and lists chats against a live server (scripts/check-sdk-guide.py). Needs a built `gatehouse`
# (swift build --package-path Server).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -d /opt/swift/usr/bin ]; then export PATH=/opt/swift/usr/bin:$PATH; fi

WORK="$(mktemp -d)"
PORT="${SDK_GUIDE_PORT:-18942}"
. scripts/serve-for-check.sh
serve_for_check "$PORT"

python3 scripts/check-sdk-guide.py --work "$WORK/package" --server "http://127.0.0.1:$PORT"
