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
# every thread idle) on this two-core machine. A serial run has stalled once too (not yet
# explained), so a watchdog ends a run that takes ten times its usual minute, names the tests
# that started and never finished, and runs the suite once more.
LOG=$(mktemp)
trap 'rm -f "$LOG"' EXIT
for attempt in 1 2; do
  set +e
  timeout --signal=KILL "${TEST_WATCHDOG_SECONDS:-600}" stdbuf -oL -eL swift test --skip-build --no-parallel "$@" 2>&1 | tee "$LOG"
  status=${PIPESTATUS[0]}
  set -e
  if [ "$status" != 137 ]; then exit "$status"; fi
  echo "test.sh: the run did not finish within ${TEST_WATCHDOG_SECONDS:-600} s (attempt $attempt). Started, never finished:" >&2
  python3 - "$LOG" >&2 <<'PY'
import re, sys
started, finished = [], set()
for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
    m = re.search(r'Test (?:case .* to )?"(.+?)" started', line)
    if m: started.append(m.group(1))
    m = re.search(r'Test "(.+?)" (?:with \d+ test cases )?(?:passed|failed)', line)
    if m: finished.add(m.group(1))
for name in dict.fromkeys(started):
    if name not in finished: print("  -", name)
PY
done
exit 1
