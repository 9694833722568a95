#!/usr/bin/env bash
# Runs every test suite from one build. SQLite always; PostgreSQL too when POSTGRES_URL is set
# (`export POSTGRES_URL=$(./scripts/start-postgres.sh)`). The SMTP tests talk to a real SMTP server
# (aiosmtpd), the S3 blob store talks to moto's S3 server (and is checked against botocore's
# signer), the terminal demo is driven through a pseudo-terminal (pexpect), and the web pages through
# Debian's headless chromium with Selenium: the Python tools come from PyPI into a virtual
# environment under .build/, never into the system Python.
# Extra arguments go to `swift test` (e.g. `--filter SecurityTests`); `--build-only` builds (and makes the tools'
# environment) without running anything, and `--built` then runs the tests without building again (CI times the
# build on its own; a build with nothing to do still takes half a minute to plan).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -d /opt/swift/usr/bin ]; then export PATH=/opt/swift/usr/bin:$PATH; fi

VENV=.build/test-venv
. scripts/python-env.sh
# Made while the build below runs (the build keeps both cores busy; this mostly waits for the network), at the lowest
# priority so that it takes no core from the build.
TOOLS=""
mkdir -p .build
if ! "$VENV/bin/python3" -c 'import aiosmtpd, pexpect, moto.server, yaml, selenium, reportlab, pypdf, websocket, hypercorn, stripe, pyotp, fido2, jwt, authlib, requests, bcrypt, argon2, django, standardwebhooks' 2>/dev/null; then
  echo "test.sh: installing the test tools from PyPI into $VENV while the build runs (a minute or two, once; log: .build/test-venv.log)"
  (
    renice -n 19 -p "$BASHPID" > /dev/null
    python_env "$VENV" 'aiosmtpd>=1.4' 'pexpect>=4.8' 'moto[server]>=5,<6' 'pyyaml>=6' 'selenium>=4.20,<5' 'reportlab>=4.2,<5' \
      'pypdf>=5.1,<7' 'websocket-client>=1.6,<2' 'hypercorn>=0.17,<1' 'stripe>=10,<17' 'pyotp>=2.9,<3' 'fido2>=2,<3' \
      'pyjwt[crypto]>=2.8,<3' 'authlib>=1.3,<2' 'requests>=2.31,<3' \
      'bcrypt>=4,<5' 'argon2-cffi>=23,<26' 'django>=4.2,<6' 'standardwebhooks>=1.1,<2'
  ) > .build/test-venv.log 2>&1 &
  TOOLS=$!
fi
# The SDK guide's samples become sources of the server package (Server/SDKGuideSamples, git-ignored), so that this
# one build compiles them too, as an app that adds the SDK would (scripts/check-sdk-guide.py checks the texts first).
BUILT=""
if [ "${1:-}" = "--built" ]; then BUILT=1; shift; fi
# GATEHOUSE_BUILD_FLAGS: more `swift build` options. CI's one build from nothing passes those that make a clean debug
# build cheaper (no debug info, lld, whole modules); a developer's build keeps the defaults, which `swift run` shares.
read -r -a BUILD_FLAGS <<< "${GATEHOUSE_BUILD_FLAGS:-}"
if [ -z "$BUILT" ]; then
  python3 scripts/check-sdk-guide.py --write-samples Server/SDKGuideSamples
  swift build --package-path Server --build-tests ${BUILD_FLAGS[@]+"${BUILD_FLAGS[@]}"}
fi
if [ -n "$TOOLS" ] && ! wait "$TOOLS"; then cat .build/test-venv.log >&2; echo "test.sh: the test tools did not install" >&2; exit 1; fi
[ "${1:-}" = "--build-only" ] && exit 0
# The tests start `python3` through PATH: the environment's comes first.
export PATH="$PWD/$VENV/bin:$PATH"
if [ -z "${POSTGRES_URL:-}" ]; then
  echo "test.sh: POSTGRES_URL is not set: every suite runs on SQLite only (export POSTGRES_URL=\$(bash scripts/start-postgres.sh) for PostgreSQL too)"
else
  echo "test.sh: SQLite, and PostgreSQL at ${POSTGRES_URL#*@} for the suites tagged .engine"
fi
# In parallel, at most TEST_PARALLEL_WIDTH tests at once (default 8): every test starts its own
# server and database, and an unbounded run starts all ~300 together, which on two cores only
# measures how long a server waits for a CPU (and exceeds PostgreSQL's connection limit).
# Swift Testing only: there are no XCTest cases, and XCTest's "Executed 0 tests" line would read
# like a failure before the real summary.
# The built test bundle is run as `swift test --skip-build` would run it, without SwiftPM planning a build it then
# skips (10 to 20 s of one core before the first test starts).
WIDTH=("--parallel" "--experimental-maximum-parallelization-width" "${TEST_PARALLEL_WIDTH:-8}")
BUNDLE=Server/.build/debug/gatehouse-serverPackageTests.xctest
if [ -x "$BUNDLE" ]; then
  exec stdbuf -oL -eL env NO_COLOR=1 "$BUNDLE" --testing-library swift-testing "${WIDTH[@]}" "$@"
fi
exec stdbuf -oL -eL swift test --package-path Server --skip-build --disable-xctest "${WIDTH[@]}" "$@"
