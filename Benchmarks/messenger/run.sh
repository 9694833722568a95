#!/usr/bin/env bash
# The messenger against Matrix Synapse, on SQLite and on the same PostgreSQL, one command:
#
#   Benchmarks/messenger/run.sh                       # both engines
#   Benchmarks/messenger/run.sh --engines sqlite      # one
#   Benchmarks/messenger/run.sh --crowd               # delivery with 18,000 idle clients connected, and without
#
# Builds gatehouse in release mode, installs wrk (Debian) when missing, Synapse and the client's
# libraries from PyPI into .build/messenger-bench-venv, starts a throwaway PostgreSQL
# (scripts/start-postgres.sh) unless POSTGRES_URL is set, and runs Benchmarks/messenger/bench.py
# against each server in turn. Env: TARGETS ("gatehouse synapse"), SECONDS_SEND (10), IDLE (1000), INTERVAL (1.0), LATENCY_SECONDS (20).
# With --crowd it runs Benchmarks/messenger/crowd.py instead. Env: TALKERS (1000), CROWD (18000), RATE (1000 messages/s),
# PHASE_SECONDS (20), CROWD_ACCOUNTS (as many as CROWD: CROWD=0 measures sends without a crowd and signs up none),
# SYNAPSE_RATE (50: what Synapse keeps up with here), SYNAPSE_CROWD_ACCOUNTS (500: its registration is slow),
# DEVICES (set: every Gatehouse talker registers a push device, so each message is a push to compose, as in an app).
# BIN: a gatehouse binary to measure instead of building one (two builds compared in turns).
set -euo pipefail
cd "$(dirname "$0")/../.."
ENGINES="sqlite postgres"
MODE=pairs
while [ $# -gt 0 ]; do
  case "$1" in
    --engines) ENGINES="${2//,/ }"; shift 2 ;;
    --crowd) MODE=crowd; shift ;;
    *) echo "unknown option $1" >&2; exit 64 ;;
  esac
done
export PATH=/opt/swift/usr/bin:$PATH
ulimit -n "$(ulimit -Hn)" || true
if ! command -v wrk >/dev/null; then
  if [ "$(id -u)" = 0 ]; then apt-get install -y wrk >/dev/null; else sudo apt-get install -y wrk >/dev/null; fi
fi
swift build --package-path Server -c release --product db-floor >&2
DB_FLOOR="$(swift build --package-path Server -c release --show-bin-path)/db-floor"
if [ -z "${BIN:-}" ]; then
  swift build --package-path Server -c release --product gatehouse >&2
  BIN="$(swift build --package-path Server -c release --show-bin-path)/gatehouse"
fi
VENV="$PWD/.build/messenger-bench-venv"
SYNAPSE_VERSION=1.163.2
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c "import synapse, sys; sys.exit(synapse.__version__ != '$SYNAPSE_VERSION')" 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q "matrix-synapse[postgres]==$SYNAPSE_VERSION" "aiohttp==3.14.5" "websockets==17.4"
fi
if [[ " $ENGINES " == *" postgres "* ]] && [ -z "${POSTGRES_URL:-}" ]; then
  POSTGRES_URL=$(bash scripts/start-postgres.sh)
fi
PG_HOST=127.0.0.1
PG_PORT=$(echo "${POSTGRES_URL:-postgres://x@127.0.0.1:55432/x}" | sed -E 's#.*:([0-9]+)/.*#\1#')
PG_ADMIN="postgres://postgres@$PG_HOST:$PG_PORT/postgres"

WORK=$(mktemp -d)
SERVER=""
stop_server() { if [ -n "$SERVER" ]; then kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; SERVER=""; fi; }
trap 'stop_server; rm -rf "$WORK"' EXIT
wait_up() { for _ in $(seq 1 300); do curl -sf "$1" >/dev/null && return 0; kill -0 "$SERVER" 2>/dev/null || { tail -50 "$2" >&2; return 1; }; sleep 0.2; done; return 1; }
bench() {  # target url pid [secret]
  if [ "$MODE" = crowd ]; then
    local extra=(--rate "${RATE:-1000}" --crowd-accounts "${CROWD_ACCOUNTS:-${CROWD:-18000}}")
    if [ "$1" = synapse ]; then extra=(--rate "${SYNAPSE_RATE:-50}" --crowd-accounts "${SYNAPSE_CROWD_ACCOUNTS:-500}"); fi
    if [ "$engine" = postgres ]; then extra+=(--postgres); fi
    if [ -n "${DEVICES:-}" ] && [ "$1" = gatehouse ]; then extra+=(--devices); fi
    "$VENV/bin/python" Benchmarks/messenger/crowd.py --target "$1" --url "$2" --server-pid "$3" --shared-secret "${4:-}" \
      --talkers "${TALKERS:-1000}" --crowd "${CROWD:-18000}" --seconds "${PHASE_SECONDS:-20}" "${extra[@]}" | sed -n 's/^RESULT //p'
    return
  fi
  "$VENV/bin/python" Benchmarks/messenger/bench.py --target "$1" --url "$2" --server-pid "$3" --shared-secret "${4:-}" \
    --seconds "${SECONDS_SEND:-10}" --idle "${IDLE:-1000}" --interval "${INTERVAL:-1.0}" --latency-seconds "${LATENCY_SECONDS:-20}" \
    | sed -n 's/^RESULT //p'
}
fresh_database() {  # name
  psql "$PG_ADMIN" -qc "DROP DATABASE IF EXISTS $1" -c "CREATE DATABASE $1 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0" >/dev/null
}

RESULTS="$WORK/results.jsonl"
TARGETS="${TARGETS:-gatehouse synapse}"
for engine in $ENGINES; do
  if [[ " $TARGETS " == *" gatehouse "* ]]; then
  # Gatehouse: limits high enough that the run measures sending, not throttling.
  if [ "$engine" = postgres ]; then fresh_database bench_gatehouse; DB="postgres://postgres@$PG_HOST:$PG_PORT/bench_gatehouse"; else DB="$WORK/gatehouse.sqlite"; fi
  ( cd "$WORK" && DATABASE_URL="$DB" GATEHOUSE_PORT=18090 GATEHOUSE_LOG_LEVEL=warning GATEHOUSE_BCRYPT_COST=4 GATEHOUSE_DELIVERY_WAIT_SECONDS=0 \
    GATEHOUSE_CODE_REQUESTS_PER_IP=100000 GATEHOUSE_CODE_REQUESTS_PER_IP_PER_DESTINATION=100000 GATEHOUSE_EMAILS_PER_ADDRESS_PER_DAY=1000 \
    GATEHOUSE_HTTP_MAX_CONNECTIONS_PER_ADDRESS=1000000 GATEHOUSE_MESSENGER_MESSAGES_PER_MINUTE=1000000 \
    exec "$BIN" serve > gatehouse.log 2>&1 ) &
  SERVER=$!
  wait_up http://127.0.0.1:18090/health "$WORK/gatehouse.log"
  PID=$(pgrep -P "$SERVER" -f "$BIN" || echo "$SERVER")
  echo "== gatehouse on $engine" >&2
  bench gatehouse http://127.0.0.1:18090 "$PID" | sed "s/^{/{\"engine\":\"$engine\",/" >> "$RESULTS"
  # How the sends were written (one statement, general, again; with their contexts remembered, not read).
  curl -fsS http://127.0.0.1:18090/metrics | grep -E '^gatehouse_send_(batches|batches_lingered|contexts_remembered)_total' | sed "s/^/$engine: /" >&2 || true
  stop_server
  if [ "$MODE" = crowd ] && [ "$engine" = postgres ]; then
    # The floor: the least a send writes, on the chats and people Gatehouse's run just used, at the same rate
    # (Benchmarks/floors).
    echo "== the send's floor (pgbench, Benchmarks/floors/send.sql) on Gatehouse's tables" >&2
    python3 Benchmarks/floors/run.py send --pg "$DB" --clients 64 --seconds "${PHASE_SECONDS:-20}" --rate "${RATE:-1000}" \
      | sed -n 's/^RESULT //p' | sed "s/^{/{\"engine\":\"$engine\",/" >> "$RESULTS"
    # The server's floor: the round trips a plain send makes, made by PostgresNIO alone at the same rate
    # (Server/Sources/db-floor): one statement, no transaction, when its chat's context is remembered (every send but
    # a chat's first on an instance); FLOOR_ROUND_TRIPS=2 adds the memberships' read a send without one makes.
    echo "== the send's round trips made by PostgresNIO alone (db-floor)" >&2
    "$DB_FLOOR" "$DB" "${RATE:-1000}" "${PHASE_SECONDS:-20}" "${FLOOR_ROUND_TRIPS:-1}" none \
      | sed -n 's/^RESULT //p' | sed "s/^{/{\"engine\":\"$engine\",/" >> "$RESULTS"
  fi
  fi

  if [[ " $TARGETS " == *" synapse "* ]]; then
  # Synapse: the client-server API only, no federation, presence off, rate limits out of the way.
  SYN="$WORK/synapse-$engine"
  mkdir -p "$SYN"
  ( cd "$SYN" && "$VENV/bin/python" -m synapse.app.homeserver --server-name bench.local --config-path "$SYN/homeserver.yaml" \
    --data-directory "$SYN" --generate-config --report-stats=no >/dev/null )
  SECRET=bench-shared-secret
  if [ "$engine" = postgres ]; then
    fresh_database bench_synapse
    DATABASE_YAML="database: {name: psycopg2, args: {user: postgres, database: bench_synapse, host: $PG_HOST, port: $PG_PORT, cp_min: 5, cp_max: 10}}"
  else
    DATABASE_YAML="database: {name: sqlite3, args: {database: $SYN/homeserver.db}}"
  fi
  "$VENV/bin/python" - "$SYN/homeserver.yaml" "$DATABASE_YAML" "$SECRET" <<'PY'
import sys, yaml
path, database, secret = sys.argv[1], sys.argv[2], sys.argv[3]
config = yaml.safe_load(open(path))
config["listeners"] = [{"port": 18091, "bind_addresses": ["127.0.0.1"], "type": "http", "tls": False, "x_forwarded": False,
                        "resources": [{"names": ["client"], "compress": False}]}]
config["database"] = yaml.safe_load(database)["database"]
config["registration_shared_secret"] = secret
config["enable_registration"] = False
config["bcrypt_rounds"] = 4
config["presence"] = {"enabled": False}
config["trusted_key_servers"] = []
config["suppress_key_server_warning"] = True
config["url_preview_enabled"] = False
config["report_stats"] = False
big = {"per_second": 1000000, "burst_count": 1000000}
for key in ["rc_message", "rc_registration", "rc_admin_redaction", "rc_joins_per_room", "rc_3pid_validation", "rc_room_creation",
            "rc_delayed_event_mgmt", "rc_reports", "rc_presence"]:
    config[key] = big if key != "rc_presence" else {"per_user": big}
config["rc_login"] = {"address": big, "account": big, "failed_attempts": big}
config["rc_joins"] = {"local": big, "remote": big}
config["rc_invites"] = {"per_room": big, "per_user": big, "per_issuer": big}
yaml.safe_dump(config, open(path, "w"))
log = config["log_config"]
logging = yaml.safe_load(open(log))
logging["root"]["level"] = "WARNING"
for handler in logging.get("handlers", {}).values():
    if "filename" in handler:   # inside the run's folder, never the working tree
        handler["filename"] = str(__import__("pathlib").Path(path).parent / "homeserver.log")
yaml.safe_dump(logging, open(log, "w"))
PY
  ( cd "$SYN" && exec "$VENV/bin/python" -m synapse.app.homeserver --config-path "$SYN/homeserver.yaml" > "$SYN/stdout.log" 2>&1 ) &
  SERVER=$!
  wait_up http://127.0.0.1:18091/health "$SYN/stdout.log"
  echo "== synapse on $engine" >&2
  bench synapse http://127.0.0.1:18091 "$SERVER" "$SECRET" | sed "s/^{/{\"engine\":\"$engine\",/" >> "$RESULTS"
  stop_server
  fi
done

mkdir -p .build/bench-results
cp "$RESULTS" ".build/bench-results/messenger-$MODE-$(date -u +%Y%m%dT%H%M%SZ).jsonl"
if [ "$MODE" = crowd ]; then
python3 - "$RESULTS" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
floors = [r for r in rows if r.get("target") == "send floor"]
nio_floors = [r for r in rows if r.get("target") == "client floor"]
rows = [r for r in rows if r.get("target") not in ("send floor", "client floor")]
print(f"{'engine':<9} {'server':<10} {'clients':>8} {'msg/s':>6} {'phase':<7} {'p50 ms':>7} {'p99 ms':>7} {'delivered':>13} {'server CPU/msg':>15} {'db CPU/msg':>11}")
for r in rows:
    for phase in ("alone", "with_crowd"):
        p = r[phase]
        clients = r["talkers"] + (r["crowd"] if phase == "with_crowd" else 0)
        db = f"{p['postgres_cpu_ms_per_message']:.3f} ms" if "postgres_cpu_ms_per_message" in p else "-"
        print(f"{r['engine']:<9} {r['target']:<10} {clients:>8} {r['rate']:>6.0f} {phase:<7.7} {p['p50_ms'] or 0:>7.2f} {p['p99_ms'] or 0:>7.2f} "
              f"{p['delivered']:>6}/{p['delivered'] + p['undelivered']:<6} {p['server_cpu_ms_per_message']:>12.3f} ms {db:>11}")
    if "idle" in r:
        i = r["idle"]
        per = 1000 * i["server_cores"] / r["rate"]
        print(f"{r['engine']}/{r['target']}: with the {r['talkers']} talkers connected and nothing sent, the server used {i['server_cores']:.4f} cores"
              + (f" and PostgreSQL {i['postgres_cores']:.4f}" if "postgres_cores" in i else "")
              + f": {per:.3f} ms of each message's server time at {r['rate']:.0f}/s is time passing")
    print(f"{r['engine']}/{r['target']}: {r['crowd']} idle clients ({r['crowd_still_open']} still open at the end), "
          f"{r['kib_per_idle_connection']:.1f} KiB each; p99 with the crowd {r['p99_crowd_vs_alone']}x the p99 without"
          + (" (goal at 1,000 messages/s: p99 <= 20 ms and <= 1.5x)" if r["target"] == "gatehouse" else ""))
    for floor in (f for f in floors if f["engine"] == r["engine"] and r["target"] == "gatehouse"):
        ours = r["alone"].get("postgres_cpu_ms_per_message")
        print(f"{r['engine']}: the send's floor at {floor['rate']:.0f}/s: {floor['tps']:.0f}/s, p99 {floor['p99_ms']:.2f} ms, "
              f"PostgreSQL {floor['postgres_ms']:.3f} ms per send"
              + (f"; gatehouse's PostgreSQL time per message {ours:.3f} ms = {ours / floor['postgres_ms']:.2f}x the floor's" if ours else ""))
    for floor in (f for f in nio_floors if f["engine"] == r["engine"] and r["target"] == "gatehouse"):
        ours = r["alone"]["server_cpu_ms_per_message"]
        print(f"{r['engine']}: a send's {floor['round_trips']} round trips made by PostgresNIO alone at {floor['rate']:.0f}/s: "
              f"{floor['client_ms']:.3f} ms of processor time per send; gatehouse's server time per message {ours:.3f} ms = "
              f"{ours / floor['client_ms']:.2f}x that")
PY
exit 0
fi
python3 - "$RESULTS" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
by = {(r["engine"], r["target"]): r for r in rows}
print(f"{'engine':<9} {'server':<10} {'send/s':>9} {'deliv p50':>10} {'deliv p99':>10} {'KiB/idle conn':>14} {'delivered':>10}")
for (engine, target), r in sorted(by.items()):
    print(f"{engine:<9} {target:<10} {r['send_rps']:>9.1f} {r['latency_p50_ms'] or 0:>8.2f}ms {r['latency_p99_ms'] or 0:>8.2f}ms "
          f"{r['kib_per_idle_connection']:>14.1f} {r['delivered']:>5}/{r['delivered'] + r['undelivered']}")
for engine in sorted({e for e, _ in by}):
    g, s = by.get((engine, "gatehouse")), by.get((engine, "synapse"))
    if g and s:
        print(f"{engine}: send throughput {g['send_rps'] / s['send_rps']:.1f}x Synapse; delivery p99 {s['latency_p99_ms'] / g['latency_p99_ms']:.1f}x lower; "
              f"memory per idle connection {s['kib_per_idle_connection'] / max(g['kib_per_idle_connection'], 0.01):.1f}x less")
PY
