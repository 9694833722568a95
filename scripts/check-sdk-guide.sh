#!/usr/bin/env bash
# The SDK guide as a newcomer uses it, in English and in Russian: every Swift sample of docs/sdk.md and docs/sdk.ru.md
# compiles in a package that adds the SDK as an app does, the manifests they show load, every client's methods are in
# their tables, the two keep the same sections and samples, and both quick starts sign up, log in, write and list
# chats against a live server (scripts/check-sdk-guide.py). Needs a built `gatehouse`
# (swift build --package-path Server).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -d /opt/swift/usr/bin ]; then export PATH=/opt/swift/usr/bin:$PATH; fi

WORK="$(mktemp -d)"
PORT="${SDK_GUIDE_PORT:-18942}"
. scripts/serve-for-check.sh
serve_for_check "$PORT"

python3 scripts/check-sdk-guide.py --work "$WORK/package" --server "http://127.0.0.1:$PORT"
