#!/usr/bin/env bash
# Schemathesis against the served OpenAPI document: every operation, with a signed-in account,
# checking that nothing answers 5xx and no answer contradicts the document.
#
#   bash Fuzz/openapi.sh                 # 100 examples per operation (the issue's bar)
#   bash Fuzz/openapi.sh --examples 5 --phases examples,fuzzing   # the bounded run CI does (the coverage
#                                        # phase's boundary cases, about 100 s alone, are the full check's)
#   bash Fuzz/openapi.sh --install-only  # only schemathesis's environment (CI makes it while it builds)
#
# Needs a built `gatehouse` (swift build --package-path Server) and python3 with venv. DATABASE_URL picks the engine
# (default: a fresh SQLite file).
set -euo pipefail
cd "$(dirname "$0")/.."
EXAMPLES=100
PHASES=examples,coverage,fuzzing
INSTALL_ONLY=""
while [ $# -gt 0 ]; do
  case "$1" in
    --examples) EXAMPLES="$2"; shift 2 ;;
    --phases) PHASES="$2"; shift 2 ;;
    --install-only) INSTALL_ONLY=1; shift ;;
    *) echo "unknown option $1" >&2; exit 64 ;;
  esac
done

VENV="${FUZZ_VENV:-.build/fuzz-venv}"
if [ ! -x "$VENV/bin/st" ]; then
  . scripts/python-env.sh
  python_env "$VENV" 'schemathesis>=4,<5'
fi
[ -n "$INSTALL_ONLY" ] && exit 0

BIN="$(swift build --package-path Server --show-bin-path)/gatehouse"
WORK="$(mktemp -d)"
PORT="${FUZZ_PORT:-18931}"
BASE="http://127.0.0.1:$PORT"
# Limits high enough that fuzzing reaches the logic instead of the throttles (429s are still
# documented answers and are checked like any other).
DATABASE_URL="${DATABASE_URL:-$WORK/fuzz.sqlite}" GATEHOUSE_PORT="$PORT" GATEHOUSE_LOG_LEVEL=error \
GATEHOUSE_DELIVERY_WAIT_SECONDS=0 GATEHOUSE_BCRYPT_COST=4 GATEHOUSE_CODE_RESEND_SECONDS=0 \
GATEHOUSE_CODE_REQUESTS_PER_IP=100000 GATEHOUSE_SMS_PER_PHONE_PER_DAY=1000 GATEHOUSE_EMAILS_PER_ADDRESS_PER_DAY=1000 \
GATEHOUSE_CODE_REQUESTS_PER_IP_PER_DESTINATION=100000 GATEHOUSE_HTTP_MAX_CONNECTIONS_PER_ADDRESS=100000 \
GATEHOUSE_LOGIN_FAILURES_PER_ACCOUNT=10000 GATEHOUSE_LOGIN_FAILURES_PER_IP=1000000 \
  "$BIN" serve > "$WORK/server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null; wait $SERVER 2>/dev/null; rm -rf "$WORK"' EXIT
# Up to 60 s: in CI it starts at a lower priority beside the fault tests.
for _ in $(seq 1 300); do curl -sf "$BASE/health" >/dev/null && break; kill -0 $SERVER 2>/dev/null || { cat "$WORK/server.log" >&2; exit 1; }; sleep 0.2; done

# A signed-in account for the authenticated operations (a new one each run: the database may
# be one an earlier run used).
RUN_ID="$(date +%s)$$"
EMAIL="fuzz-$RUN_ID@example.com"
curl -sf -X POST "$BASE/v1/signup/code" -H 'Content-Type: application/json' -d "{\"email\":\"$EMAIL\"}" >/dev/null
CODE=$(curl -sf "$BASE/dev/outbox?to=$EMAIL" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["code"])')
TOKEN=$(curl -sf -X POST "$BASE/v1/signup" -H 'Content-Type: application/json' \
  -d "{\"email\":\"$EMAIL\",\"code\":\"$CODE\",\"password\":\"fuzz-pass-1\",\"tag\":\"fz$RUN_ID\"}" \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')

# Operations that would end the fuzzer's own session are left out: logout on both surfaces.
"$VENV/bin/st" run "$BASE/openapi.json" --url "$BASE" \
  -H "Authorization: Bearer $TOKEN" \
  --max-examples "$EXAMPLES" --seed 20261122 \
  --phases "$PHASES" \
  --checks not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance \
  --exclude-operation-id logOut --exclude-operation-id phoneLogout \
  --warnings off --no-color
