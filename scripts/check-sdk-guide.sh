#!/usr/bin/env bash
# The SDK guide as a newcomer uses it, in English and in Russian: both quick starts sign up, log in, write and list
# chats against a live server (scripts/check-sdk-guide.py). Its samples compile in the server package's build:
# scripts/test.sh writes them (check-sdk-guide.py --write-samples) before it builds, and checks the texts and the
# manifests they show; this runs the built quick starts. Needs that build (./scripts/test.sh, or
# `python3 scripts/check-sdk-guide.py --write-samples Server/SDKGuideSamples && swift build --package-path Server`).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -d /opt/swift/usr/bin ]; then export PATH=/opt/swift/usr/bin:$PATH; fi

WORK="$(mktemp -d)"
PORT="${SDK_GUIDE_PORT:-18942}"
. scripts/serve-for-check.sh
serve_for_check "$PORT"

python3 scripts/check-sdk-guide.py --run-quick-starts "$(dirname "$BIN")" --server "http://127.0.0.1:$PORT"
