#!/usr/bin/env bash
# The full check: what CI (.ci/run) does not run on every submission (the checks CI runs, it leaves to CI), run before an issue that touches these
# areas is called resolved (say in its note that it passed and how long it took). Like CI it prints one `ci-step`
# line per step and the total, and ends with no process of its run left. About an hour and a half on two cores
# from a clean clone (measured in a warm tree: 56 minutes before the two ten-minute soaks; a clean build adds 14).
#
#   bash scripts/full-check.sh                 # everything
#   bash scripts/full-check.sh --skip-install  # without apt-get (the packages are there already)
#
# What it runs, beyond CI:
# - every suite on both engines (GATEHOUSE_TEST_EVERY_ENGINE=1: CI runs the untagged ones on SQLite only), and the
#   SDK's suites once more with their servers on PostgreSQL;
# - schemathesis's three phases at 100 examples per operation on SQLite and on PostgreSQL (CI: examples and fuzzing
#   at 5, SQLite);
# - every fault test on both engines (CI: each on the engine where its fault bites), with the wallet's ledger checker
#   at 10,000 operations (CI: 600) and the mixed-load soaks at their documented ten minutes (CI: 25 s);
# - the generated OpenAPI client (swift-openapi-generator) compiled and walked against a live server;
# - the SDK's DocC archives with their coverage; docs/deploy.md for real (nginx in front of two instances; the
#   container image built from nothing, run with podman, the README's demo against it);
# - the bounded WebSocket fuzzing (600 cases) and the known issues' reproductions, which CI leaves to this run;
# - the fleet (Faults/test_fleet.py: three instances behind HAProxy, PgBouncer, Redis, a primary and its synchronous
#   standby) losing an instance, Redis, the standby, PgBouncer and the primary under load.
# (`bash scripts/check-sdk-package.sh --build` builds the SDK package alone, as an app's build of it would, and
# `bash Fuzz/websocket.sh --cases 5000 --seed 7` is the long WebSocket fuzz: neither proves more than this does.)
# Needs root for apt-get (or --skip-install with the packages of .ci/run plus nginx and haproxy).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/steps.sh
export GATEHOUSE_RUN_MARK="full-$$-$(date +%s)"
trap 'steps_summary full-check' EXIT

install() {
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  if [ ! -e /usr/sbin/policy-rc.d ]; then printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d; fi
  apt-get install -y postgresql postgresql-client openssl python3-venv curl libsqlite3-dev chromium chromium-driver qpdf poppler-utils nginx \
    redis-server pgbouncer haproxy podman runc
}
[ "${1:-}" = "--skip-install" ] || step install install

start_postgres() {
  POSTGRES_URL=$(bash scripts/start-postgres.sh)
  export POSTGRES_URL
  echo "PostgreSQL ready at $POSTGRES_URL"
}
step postgres start_postgres
trap 'status=$?; bash scripts/start-postgres.sh --stop >/dev/null 2>&1 || true; steps_summary full-check "$status"' EXIT

step tests-every-engine env GATEHOUSE_TEST_EVERY_ENGINE=1 bash scripts/test.sh
step sdk-on-postgres env GATEHOUSE_SDK_TEST_ENGINE=postgres bash scripts/test.sh --built --filter GatehouseKitTests
step openapi-client bash scripts/check-openapi-client.sh
step docc bash scripts/build-sdk-docs.sh
step deploy bash scripts/check-deploy.sh
step image bash scripts/check-image.sh
# WebSocket fuzzing (docs/reliability.md#websocket-fuzzing), bounded: 600 cases, every finding counted. Alone: it
# gives the server 4 s to answer a pipeline of up to 200 frames, which a machine shared with other checks missed.
step websocket-fuzz bash Fuzz/websocket.sh
step openapi-fuzz-sqlite bash Fuzz/openapi.sh --examples 100
step openapi-fuzz-postgres env DATABASE_URL="$POSTGRES_URL" FUZZ_PORT=18932 bash Fuzz/openapi.sh --examples 100
step faults env LEDGER_OPS=10000 FAULTS_STRICT=1 SOAK_SECONDS=600 SOAK_RESTART_EVERY_SECONDS=60 \
  bash Faults/run.sh --only crash,messages,mail,pg-restart,two-instances,ledger,known,soak,fleet

step stop-postgres bash scripts/start-postgres.sh --stop
step leftovers no_leftovers
