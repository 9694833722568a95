#!/usr/bin/env bash
# Runs the whole test suite. SQLite always; PostgreSQL too when POSTGRES_URL is set
# (e.g. postgres://postgres@127.0.0.1:55432/gatehouse_test). The SMTP tests talk to a real
# SMTP server (aiosmtpd from PyPI) and the terminal demo is driven through a pseudo-terminal
# (pexpect from PyPI); both are installed here when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -d /opt/swift/usr/bin ]; then export PATH=/opt/swift/usr/bin:$PATH; fi
if ! python3 -c 'import aiosmtpd, pexpect' 2>/dev/null; then
  python3 -m pip install --quiet 'aiosmtpd>=1.4' 'pexpect>=4.8'
fi
swift build --build-tests
# Serially: with tests in parallel the process has been seen to stall (every task suspended,
# every thread idle) on this two-core machine; serial runs are stable and no slower here.
swift test --skip-build --no-parallel "$@"
