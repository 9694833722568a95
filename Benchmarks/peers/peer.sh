#!/usr/bin/env bash
# Peer servers for the Gatehouse benchmark: django-allauth (headless, app client) and fastapi-users
# (database token strategy), each from PyPI in its own venv, served by gunicorn with uvicorn workers.
#
#   peer.sh setup   allauth|fastapi-users
#   peer.sh start   allauth|fastapi-users --db sqlite:/abs/file.sqlite|postgres://... --port PORT [--workers N]
#                   -> prints the gunicorn master PID (only stdout line)
#   peer.sh prepare allauth|fastapi-users --port PORT
#                   -> prints {"path": "...", "header": "..."} (only stdout line)
#   peer.sh stop    PID
#
# Environment: BCRYPT_COST (default 10), PEER_PYTHON (interpreter for the venvs, default: Python 3.12),
# PEER_STATE_DIR (default ${TMPDIR:-/tmp}/gatehouse-peers). Everything but the documented stdout
# line goes to stderr. See Benchmarks/peers/README.md.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
STATE_DIR=${PEER_STATE_DIR:-${TMPDIR:-/tmp}/gatehouse-peers}
BCRYPT_COST=${BCRYPT_COST:-10}
BENCH_EMAIL=bench@example.com

say() { echo "peer: $*" >&2; }
die() { echo "peer: error: $*" >&2; exit 1; }

usage() {
  sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

# Sets PEER, PEER_DIR, VENV, APP_SPEC, PEER_DBNAME for a peer name.
peer_info() {
  PEER=${1:-}
  case "$PEER" in
    allauth)
      PEER_DIR=$HERE/allauth
      VENV=$ROOT/.build/peer-venv-allauth
      APP_SPEC=benchsite.asgi:application
      PEER_DBNAME=bench_allauth
      ;;
    fastapi-users)
      PEER_DIR=$HERE/fastapi-users
      VENV=$ROOT/.build/peer-venv-fastapi
      APP_SPEC=app:app
      PEER_DBNAME=bench_fastapi
      ;;
    *) die "unknown peer '${PEER}' (want allauth or fastapi-users)" ;;
  esac
}

# Prints the interpreter to build the venvs with. The pins were made on Python 3.12 (Django 6.x
# needs >= 3.12); 3.13 is accepted as a fallback.
find_python() {
  if [ -n "${PEER_PYTHON:-}" ]; then echo "$PEER_PYTHON"; return; fi
  local cand want
  for want in 3.12 3.13; do
    for cand in "python$want" $(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$want".*/bin/python3 2>/dev/null | sort -V -r) python3; do
      if "$cand" -c "import sys; sys.exit(0 if sys.version_info[:2] == tuple(map(int, '$want'.split('.'))) else 1)" >/dev/null 2>&1; then
        echo "$cand"; return
      fi
    done
  done
  die "no Python 3.12 or 3.13 found (set PEER_PYTHON)"
}

stamp_of() { # what a finished setup records: requirements hash + interpreter version
  echo "$(sha256sum "$PEER_DIR/requirements.txt" | cut -d' ' -f1) $("$1" -c 'import sys; print(sys.version.split()[0])')"
}

cmd_setup() {
  peer_info "${1:-}"
  local stampfile=$VENV/.peer-setup-stamp
  if [ -x "$VENV/bin/python" ] && [ -f "$stampfile" ] \
     && [ "$(cat "$stampfile")" = "$(stamp_of "$VENV/bin/python")" ] \
     && "$VENV/bin/python" -c 'import gunicorn, uvicorn_worker' >/dev/null 2>&1; then
    say "$PEER: already installed in $VENV"
    return 0
  fi
  local py; py=$(find_python)
  say "$PEER: creating $VENV with $py ($("$py" --version 2>&1))"
  rm -rf "$VENV"
  mkdir -p "$(dirname "$VENV")"
  "$py" -m venv "$VENV"
  "$VENV/bin/python" -m pip install --no-input --quiet --disable-pip-version-check \
    -r "$PEER_DIR/requirements.txt" >&2
  "$VENV/bin/python" -m pip check >&2
  stamp_of "$VENV/bin/python" > "$stampfile"
  say "$PEER: installed $(grep -v '^#' "$PEER_DIR/requirements.txt" | wc -l) pinned packages into $VENV"
}

# Exit 0 when something answers HTTP on 127.0.0.1:$1 (any status).
http_answers() {
  "$VENV/bin/python" - "$1" <<'PY' >/dev/null 2>&1
import sys, urllib.request, urllib.error
try:
    urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/", timeout=2)
except urllib.error.HTTPError:
    pass
PY
}

cmd_start() {
  peer_info "${1:-}"; shift || true
  local db="" port="" workers
  workers=$(nproc)
  while [ $# -gt 0 ]; do
    case "$1" in
      --db) db=${2:-}; shift 2 ;;
      --port) port=${2:-}; shift 2 ;;
      --workers) workers=${2:-}; shift 2 ;;
      *) die "start: unknown argument '$1'" ;;
    esac
  done
  [ -n "$db" ] || die "start: --db is required"
  [[ "$port" =~ ^[0-9]+$ ]] || die "start: --port PORT is required"
  [[ "$workers" =~ ^[1-9][0-9]*$ ]] || die "start: --workers must be a positive number"
  cmd_setup "$PEER"

  local peer_db admin_url="" logdir
  case "$db" in
    sqlite:*)
      local path=${db#sqlite:}
      [[ "$path" == ///* ]] && path=${path#//}
      [[ "$path" == /* ]] || die "start: sqlite path must be absolute: $db"
      peer_db=sqlite:$path
      logdir=$(dirname "$path")
      mkdir -p "$logdir"
      ;;
    postgres://*|postgresql://*)
      admin_url=$db
      # Same server, the peer's own database (dropped and created afresh below).
      local base=${db%%\?*} query=""
      [[ "$db" == *\?* ]] && query="?${db#*\?}"
      peer_db="${base%/*}/$PEER_DBNAME$query"
      [[ "${base#*://}" == */* ]] || peer_db="$base/$PEER_DBNAME$query"
      logdir=$(mktemp -d "${TMPDIR:-/tmp}/gatehouse-peer-$PEER.XXXXXX")
      ;;
    *) die "start: --db must be sqlite:/abs/path or postgres://..." ;;
  esac
  local log=$logdir/peer-$PEER-$port.log pidfile=$logdir/peer-$PEER-$port.pid
  : > "$log"
  rm -f "$pidfile"
  say "$PEER: log $log"
  if http_answers "$port"; then die "start: something already answers on 127.0.0.1:$port"; fi

  export PEER_DB=$peer_db BCRYPT_COST
  export PYTHONPATH=$PEER_DIR:$HERE/common
  say "$PEER: fresh database ${peer_db} (bcrypt cost $BCRYPT_COST)"
  if ! (cd "$PEER_DIR" && "$VENV/bin/python" resetdb.py ${admin_url:+"$admin_url"}) >>"$log" 2>&1; then
    tail -n 30 "$log" >&2
    die "start: creating the database failed"
  fi

  # setsid: own session and process group, so the orchestrator's terminal signals do not reach it
  # and `stop` can find stray workers by process group. No access log; errors/startup to $log.
  setsid "$VENV/bin/gunicorn" \
    --chdir "$PEER_DIR" \
    --worker-class benchworker.BenchUvicornWorker \
    --workers "$workers" \
    --bind "127.0.0.1:$port" \
    --pid "$pidfile" \
    --log-level info \
    --error-logfile - \
    --keep-alive 5 \
    --timeout 60 \
    --graceful-timeout 10 \
    --no-control-socket \
    "$APP_SPEC" </dev/null >>"$log" 2>&1 &
  local launched=$!

  local deadline=$((SECONDS + 120)) started=0
  while :; do
    if ! kill -0 "$launched" 2>/dev/null \
       && ! { [ -s "$pidfile" ] && kill -0 "$(tr -d '[:space:]' < "$pidfile")" 2>/dev/null; }; then
      tail -n 40 "$log" >&2
      die "start: gunicorn exited during startup"
    fi
    started=$(grep -c 'Started server process' "$log" || true)
    if [ "$started" -ge "$workers" ] && [ -s "$pidfile" ] && http_answers "$port"; then break; fi
    if [ $SECONDS -ge $deadline ]; then
      tail -n 40 "$log" >&2
      kill -TERM "$launched" 2>/dev/null || true
      die "start: gunicorn did not come up within 120 s ($started of $workers workers started)"
    fi
    sleep 0.3
  done
  local pid; pid=$(tr -d '[:space:]' < "$pidfile")
  [ "$pid" = "$launched" ] || say "$PEER: note: pidfile says $pid, launched $launched"

  mkdir -p "$STATE_DIR"
  {
    printf 'STATE_PEER=%q\n' "$PEER"
    printf 'STATE_DB=%q\n' "$peer_db"
    printf 'STATE_BCRYPT_COST=%q\n' "$BCRYPT_COST"
    printf 'STATE_PID=%q\n' "$pid"
    printf 'STATE_LOG=%q\n' "$log"
  } > "$STATE_DIR/$PEER-$port.env"
  say "$PEER: gunicorn master $pid on 127.0.0.1:$port, $workers uvicorn workers"
  echo "$pid"
}

cmd_prepare() {
  peer_info "${1:-}"; shift || true
  local port=""
  while [ $# -gt 0 ]; do
    case "$1" in
      --port) port=${2:-}; shift 2 ;;
      *) die "prepare: unknown argument '$1'" ;;
    esac
  done
  [[ "$port" =~ ^[0-9]+$ ]] || die "prepare: --port PORT is required"
  [ -x "$VENV/bin/python" ] || die "prepare: $PEER is not set up (peer.sh setup $PEER)"

  local result
  result=$("$VENV/bin/python" "$HERE/common/prepare.py" "$PEER" "$port") || die "prepare: $PEER on port $port failed"

  # Check the stored password hash is bcrypt at the configured cost, reading the database that
  # `start` recorded for this port.
  local state=$STATE_DIR/$PEER-$port.env
  if [ -f "$state" ]; then
    local STATE_DB STATE_BCRYPT_COST hash want
    # shellcheck disable=SC1090
    source "$state"
    hash=$(cd "$PEER_DIR" && PEER_DB=$STATE_DB BCRYPT_COST=$STATE_BCRYPT_COST PYTHONPATH=$PEER_DIR:$HERE/common \
      "$VENV/bin/python" storedhash.py "$BENCH_EMAIL") || die "prepare: reading the stored hash failed"
    want=$(printf '$2b$%02d$' "$STATE_BCRYPT_COST")
    case "$hash" in
      "$want"*|"bcrypt\$$want"*) say "$PEER: stored hash ${hash:0:${#want}+8}... is bcrypt cost $STATE_BCRYPT_COST" ;;
      *) die "prepare: stored hash '${hash:0:20}...' is not bcrypt cost $STATE_BCRYPT_COST" ;;
    esac
  else
    say "$PEER: warning: no state file $state (not started by peer.sh?); bcrypt cost not checked"
  fi
  echo "$result"
}

cmd_stop() {
  local pid=${1:-}
  [[ "$pid" =~ ^[0-9]+$ ]] || die "stop: PID required"
  if ! kill -0 "$pid" 2>/dev/null; then say "stop: $pid is not running"; return 0; fi
  tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q gunicorn \
    || die "stop: process $pid is not gunicorn; refusing to signal it"
  kill -TERM "$pid"
  local deadline=$((SECONDS + 30))
  while kill -0 "$pid" 2>/dev/null; do
    if [ $SECONDS -ge $deadline ]; then
      say "stop: $pid still running 30 s after SIGTERM; sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      break
    fi
    sleep 0.2
  done
  # Workers of that master, if any outlived it (they share its session and process group, see
  # setsid in start).
  local stray
  stray=$(ps -o pid= -s "$pid" 2>/dev/null | tr -s ' \n' ' ' || true)
  if [ -n "${stray// /}" ]; then
    say "stop: stray workers in session $pid:$stray- sending SIGTERM"
    kill -TERM -- "-$pid" 2>/dev/null || true
  fi
  say "stop: gunicorn $pid stopped"
}

main() {
  local cmd=${1:-}; shift || true
  case "$cmd" in
    setup) [ $# -eq 1 ] || usage; cmd_setup "$1" ;;
    start) cmd_start "$@" ;;
    prepare) cmd_prepare "$@" ;;
    stop) [ $# -eq 1 ] || usage; cmd_stop "$1" ;;
    *) usage ;;
  esac
}

main "$@"
