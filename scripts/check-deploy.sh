#!/usr/bin/env bash
# docs/deploy.md tried for real (scripts/check_deploy.py): Debian's nginx, with the page's configuration and a
# self-signed certificate, in front of two instances on one PostgreSQL database. Needs a built `gatehouse`,
# POSTGRES_URL, nginx, openssl, curl and psql, and the test tools' virtual environment (websocket-client).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -d /opt/swift/usr/bin ]; then export PATH=/opt/swift/usr/bin:$PATH; fi
BIN="$(swift build --package-path Server --show-bin-path)/gatehouse"
PYTHON=.build/test-venv/bin/python3
[ -x "$PYTHON" ] || PYTHON=python3
"$PYTHON" scripts/check_deploy.py --gatehouse "$BIN" --postgres-url "${POSTGRES_URL:?POSTGRES_URL is needed}"
