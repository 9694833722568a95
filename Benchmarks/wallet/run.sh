#!/usr/bin/env bash
# The wallet's transfers against the database's own bank transfer, in one run:
#
#   Benchmarks/wallet/run.sh                      # PostgreSQL (against pgbench tpcb-like) and SQLite
#   Benchmarks/wallet/run.sh --engines postgres   # one
#
# Builds gatehouse in release mode, installs wrk and pgbench (Debian) when missing, starts a
# throwaway PostgreSQL (scripts/start-postgres.sh) unless POSTGRES_URL is set, and prints each
# result and the ratios. Env: PAYERS (200), CONNECTIONS (64), SCALE (16, pgbench), SECONDS_RUN (15), WARMUP (3),
# PACED_SHARE (0.5: after the saturation run, Gatehouse again at this share of the rate it just reached, steadily,
# latencies counted from when each transfer was due, and pgbench at the same rate with -R; 0 skips it), PACED_RATE (a
# fixed steady rate instead), PLAN_CACHE_MODE (force_generic_plan, as docs/deploy.md advises for payments; auto for
# PostgreSQL's own choice), BIN (a gatehouse binary to measure instead of building one: two builds compared in turns),
# DEVICES (set: every payer registers a push device, so each transfer received is a push to compose, as in an app).
set -euo pipefail
cd "$(dirname "$0")/../.."
ENGINES="postgres sqlite"
while [ $# -gt 0 ]; do
  case "$1" in
    --engines) ENGINES="${2//,/ }"; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 64 ;;
  esac
done
export PATH=/opt/swift/usr/bin:$PATH
ulimit -n "$(ulimit -Hn)" || true
need() { command -v "$1" >/dev/null || { if [ "$(id -u)" = 0 ]; then apt-get install -y "$2" >/dev/null; else sudo apt-get install -y "$2" >/dev/null; fi; }; }
need wrk wrk
need pgbench postgresql-contrib
if [ -z "${BIN:-}" ]; then
  swift build --package-path Server -c release --product gatehouse >&2
  BIN="$(swift build --package-path Server -c release --show-bin-path)/gatehouse"
fi
if [[ " $ENGINES " == *" postgres "* ]] && [ -z "${POSTGRES_URL:-}" ]; then
  POSTGRES_URL=$(bash scripts/start-postgres.sh)
fi
PG_PORT=$(echo "${POSTGRES_URL:-postgres://x@127.0.0.1:55432/x}" | sed -E 's#.*:([0-9]+)/.*#\1#')
PG_ADMIN="postgres://postgres@127.0.0.1:$PG_PORT/postgres"

WORK=$(mktemp -d)
SERVER=""
stop_server() { if [ -n "$SERVER" ]; then kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; SERVER=""; fi; }
trap 'stop_server; rm -rf "$WORK"' EXIT
wait_up() { for _ in $(seq 1 300); do curl -sf "$1" >/dev/null && return 0; kill -0 "$SERVER" 2>/dev/null || { tail -50 "$2" >&2; return 1; }; sleep 0.2; done; return 1; }
# A fresh database, and a checkpoint so that neither side measures the other's leftover writes.
fresh_database() { psql "$PG_ADMIN" -qc "DROP DATABASE IF EXISTS $1" -c "CREATE DATABASE $1" -c "CHECKPOINT" >/dev/null; }
RESULTS="$WORK/results.jsonl"

for engine in $ENGINES; do
  if [ "$engine" = postgres ]; then fresh_database bench_wallet; DB="postgres://postgres@127.0.0.1:$PG_PORT/bench_wallet"; else DB="$WORK/gatehouse.sqlite"; fi
  # Limits high enough that the run measures transfers, not throttling.
  export DATABASE_URL="$DB" GATEHOUSE_PORT=18091 GATEHOUSE_LOG_LEVEL=warning GATEHOUSE_BCRYPT_COST=4 GATEHOUSE_DELIVERY_WAIT_SECONDS=0 \
    GATEHOUSE_CODE_REQUESTS_PER_IP=100000 GATEHOUSE_CODE_REQUESTS_PER_IP_PER_DESTINATION=100000 GATEHOUSE_SMS_PER_PHONE_PER_DAY=1000 \
    GATEHOUSE_HTTP_MAX_CONNECTIONS_PER_ADDRESS=1000000 GATEHOUSE_WALLET_DAILY_LIMIT_KOPECKS=1000000000000 \
    GATEHOUSE_DB_PLAN_CACHE_MODE="${PLAN_CACHE_MODE:-force_generic_plan}"
  ( cd "$WORK" && exec "$BIN" serve > "gatehouse-$engine.log" 2>&1 ) &
  SERVER=$!
  wait_up http://127.0.0.1:18091/health "$WORK/gatehouse-$engine.log"
  echo "== gatehouse transfers on $engine" >&2
  python3 Benchmarks/wallet/bench.py gatehouse --url http://127.0.0.1:18091 --gatehouse "$BIN" --workdir "$WORK" --server-pid "$SERVER" \
    | sed -n 's/^RESULT //p' | sed "s/^{/{\"engine\":\"$engine\",/" >> "$RESULTS"
  stop_server
  unset DATABASE_URL
  if [ "$engine" = postgres ]; then
    # The floor: the least a transfer writes, on the tables and people Gatehouse's run just used, saturated and at
    # the same steady rate (Benchmarks/floors).
    # Gatehouse's steady rate: the floor and pgbench are paced at it too.
    RATE=$(python3 -c 'import json, sys; print(json.loads(open(sys.argv[1]).readlines()[-1]).get("paced_rate", 0))' "$RESULTS")
    echo "== the transfer's floor (pgbench, Benchmarks/floors/transfer.sql) on Gatehouse's tables" >&2
    for rate in 0 "$RATE"; do
      python3 Benchmarks/floors/run.py transfer --pg "$DB" --clients "${CONNECTIONS:-64}" --seconds "${SECONDS_RUN:-15}" --rate "$rate" \
        | sed -n 's/^RESULT //p' | sed "s/^{/{\"engine\":\"postgres\",/" >> "$RESULTS"
    done
    echo "== pgbench tpcb-like on the same PostgreSQL" >&2
    fresh_database bench_pgbench
    python3 Benchmarks/wallet/bench.py pgbench --pg "postgres://postgres@127.0.0.1:$PG_PORT/bench_pgbench" --rate "$RATE" \
      | sed -n 's/^RESULT //p' | sed "s/^{/{\"engine\":\"postgres\",/" >> "$RESULTS"
  else
    echo "== tpcb-like on SQLite, one writer" >&2
    python3 Benchmarks/wallet/bench.py sqlite --path "$WORK/tpcb.sqlite" | sed -n 's/^RESULT //p' | sed 's/^{/{"engine":"sqlite",/' >> "$RESULTS"
  fi
done

python3 - "$RESULTS" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
def cost(r, prefix=""):
    out = ""
    if r.get(prefix + "server_ms") is not None:
        out += f"  server {r[prefix + 'server_ms']:.3f} ms"
    if r.get(prefix + "postgres_ms") is not None:
        out += f"  PostgreSQL {r[prefix + 'postgres_ms']:.3f} ms"
    return out + " per transfer" if out else ""
for r in rows:
    if r["target"] == "transfer floor":
        what = "saturated" if not r["rate"] else f"offered {r['rate']:.0f}/s steadily"
        print(f"{r['engine']:8} {'floor':12} {r['tps']:8.0f}/s  p50 {r['p50_ms']:6.2f} ms  p99 {r['p99_ms']:6.2f} ms  ({what}){cost(r)}")
        continue
    print(f"{r['engine']:8} {r['target']:12} {r['rps']:8.0f}/s  p50 {r['p50_ms']:6.2f} ms  p99 {r['p99_ms']:6.2f} ms"
          + (f"  non-2xx {r['non2xx']}  errors {r['errors']}  audit: {r['audit']}" if r['target'] == 'gatehouse' else "") + cost(r))
    if "paced_p99_ms" in r:
        print(f"{'':8} {'':12} offered {r['paced_rate']}/s steadily: {r['paced_rps']:6.0f}/s  p50 {r['paced_p50_ms']:6.2f} ms  p99 {r['paced_p99_ms']:6.2f} ms"
              + (f"  non-2xx {r['paced_non2xx']}" if r['target'] == 'gatehouse' else "") + cost(r, "paced_"))
for engine, peer in (("postgres", "pgbench"), ("sqlite", "sqlite-tpcb")):
    ours = next((r for r in rows if r["engine"] == engine and r["target"] == "gatehouse"), None)
    theirs = next((r for r in rows if r["engine"] == engine and r["target"] == peer), None)
    if ours and theirs:
        print(f"{engine}: gatehouse transfers / {peer} = {ours['rps'] / theirs['rps']:.2f} saturated (goal on PostgreSQL: >= 0.50)")
    if ours and "paced_p99_ms" in ours:
        share = ours["paced_rate"] / ours["rps"]
        beside = f"; {peer} at the same rate: p99 {theirs['paced_p99_ms']:.2f} ms" if theirs and "paced_p99_ms" in theirs else ""
        print(f"{engine}: at {ours['paced_rate']}/s ({share:.0%} of saturated) gatehouse p99 {ours['paced_p99_ms']:.2f} ms"
              f" (goal on PostgreSQL at 50%: <= 20 ms){beside}")
    floors = [r for r in rows if r["engine"] == engine and r["target"] == "transfer floor"]
    for floor in floors:
        mine = ours and (ours.get("paced_postgres_ms") if floor["rate"] else ours.get("postgres_ms"))
        if mine:
            what = f"at {floor['rate']:.0f}/s" if floor["rate"] else "saturated"
            print(f"{engine}: {what}, PostgreSQL time per transfer {mine:.3f} ms = {mine / floor['postgres_ms']:.2f}x the floor's "
                  f"{floor['postgres_ms']:.3f} ms; the floor does {floor['tps']:.0f}/s, p99 {floor['p99_ms']:.2f} ms")
PY
