#!/usr/bin/env bash
# The signature verifier on research data (Benchmarks/signature/README.md):
#
#   Benchmarks/signature/run.sh FOLDER...              # in process: EERs, enrolment, time per verification
#   Benchmarks/signature/run.sh --loso FOLDER...       # leave one set out: tuned on it, held out, shipped
#   Benchmarks/signature/run.sh --wire FOLDER...       # and through a gatehouse server's /register/ and /authenticate/
#
#   Benchmarks/signature/run.sh --wire synthetic:40    # what an authentication costs, on made-up writers
#
# FOLDER holds one research set (MCYT-100's .fpg files, a SUSIG sub-corpus's .sig files, a SigComp 2009 set's .hwr files);
# Benchmarks/signature/fetch.sh brings them into a temporary folder. They are research-only: never
# copy them into the repository. Extra options go to the evaluator (--references N, --random N,
# --writers N, --json). Env for --wire: WIRE_RANDOM (random forgeries per writer, 20), CONCURRENCY (8).
# synthetic:N instead of a folder: N writers the tests' generator makes up (nothing fetched); over the wire
# it prints the server's processor time per authentication beside the latency (CONCURRENCY=1: one at a time).
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH=/opt/swift/usr/bin:$PATH
WIRE=0
LOSO=0
FOLDERS=()
OPTIONS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --wire) WIRE=1; shift ;;
    --loso) LOSO=1; shift ;;
    --references|--random|--writers) OPTIONS+=("$1" "$2"); shift 2 ;;
    --json) OPTIONS+=("$1"); shift ;;
    -*) echo "unknown option $1" >&2; exit 64 ;;
    *) FOLDERS+=("$1"); shift ;;
  esac
done
[ ${#FOLDERS[@]} -gt 0 ] || { sed -n '2,12p' "$0" >&2; exit 64; }

swift build --package-path Server -c release --product signature-eval >&2
BIN="$(swift build --package-path Server -c release --show-bin-path)"

if [ "$LOSO" = 1 ]; then
  exec "$BIN/signature-eval" --loso "${FOLDERS[@]}" "${OPTIONS[@]}"
fi
if [ "$WIRE" = 0 ]; then
  for folder in "${FOLDERS[@]}"; do "$BIN/signature-eval" "$folder" "${OPTIONS[@]}"; done
  exit 0
fi

# Over the wire: a release gatehouse on a throwaway SQLite file, limits high enough that the run
# measures verifying, not throttling; one app registered with the command line. Every attempt is an
# HTTP request, so random forgeries are WIRE_RANDOM other writers' (20) unless --random says.
[[ " ${OPTIONS[*]:-} " == *" --random "* ]] || OPTIONS+=(--random "${WIRE_RANDOM:-20}")
swift build --package-path Server -c release --product gatehouse >&2
WORK=$(mktemp -d)
SERVER=""
trap 'if [ -n "$SERVER" ]; then kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; fi; rm -rf "$WORK"' EXIT
export DATABASE_URL="$WORK/gatehouse.sqlite" GATEHOUSE_PORT=18095 GATEHOUSE_LOG_LEVEL=warning GATEHOUSE_BCRYPT_COST=4 \
  GATEHOUSE_SIGNATURE_ATTEMPTS_PER_ACCOUNT=1000000 GATEHOUSE_SIGNATURE_ATTEMPTS_PER_IP=1000000 \
  GATEHOUSE_SIGNATURE_ATTEMPTS_PER_SESSION=1000000 GATEHOUSE_SIGNATURE_LOOKUPS_PER_IP=1000000 \
  GATEHOUSE_CODE_REQUESTS_PER_IP=100000
"$BIN/gatehouse" migrate >/dev/null
APIKEY=$("$BIN/gatehouse" apps create --name "Signature evaluation" --bundle-id com.example.signature-eval \
  --email eval@example.com --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["apikey"])')
"$BIN/gatehouse" serve >"$WORK/server.log" 2>&1 &
SERVER=$!
for _ in $(seq 1 300); do curl -sf http://127.0.0.1:18095/health >/dev/null && break; sleep 0.2; done
for folder in "${FOLDERS[@]}"; do
  "$BIN/signature-eval" "$folder" --server http://127.0.0.1:18095/ --apikey "$APIKEY" \
    --concurrency "${CONCURRENCY:-8}" --server-pid "$SERVER" "${OPTIONS[@]}"
done
