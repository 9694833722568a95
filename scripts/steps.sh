# Sourced by .ci/run and scripts/full-check.sh: `step NAME COMMAND…` runs one step and prints its duration
# (`ci-step NAME 123 s`), `together NAME…` runs commands (functions or scripts without arguments) at once, each
# with its own log printed whole when it ends and its own duration line, `steps_summary LABEL` (on exit) every step's line again and the total, so that a slow step
# shows in every run's log; `no_leftovers` fails when a process of this run (one whose environment carries
# GATEHOUSE_RUN_MARK) is still running, naming each, and kills them.
STEPS_STARTED=$SECONDS
STEP_LINES=()
STEP_CURRENT=""
STEP_CURRENT_STARTED=0

step() {
  STEP_CURRENT=$1
  shift
  STEP_CURRENT_STARTED=$SECONDS
  echo "== step $STEP_CURRENT: $*"
  "$@"
  local line
  line=$(printf 'ci-step %-16s %5d s' "$STEP_CURRENT" $((SECONDS - STEP_CURRENT_STARTED)))
  STEP_LINES+=("$line")
  echo "$line"
  STEP_CURRENT=""
}

# For checks that mostly wait (on a server in a debug build, on a Python client, on the network): on two cores,
# each leaves the other core mostly idle. Fails when any fails, after all have ended.
together() {
  local dir name i took rc status=0 pids=() names=()
  dir=$(mktemp -d "${TMPDIR:-/tmp}/gatehouse-together.XXXXXX")
  for name in "$@"; do
    (
      set +e
      started=$SECONDS
      # Its own subshell with errexit on, as a step's command has (inside `if`, bash would ignore it).
      (set -e; "$name") > "$dir/$name.log" 2>&1
      echo "$((SECONDS - started)) $?" > "$dir/$name.status"
    ) &
    pids+=($!)
    names+=("$name")
  done
  for i in "${!pids[@]}"; do
    name=${names[$i]}
    wait "${pids[$i]}" || true
    read -r took rc < "$dir/$name.status" || { took=0; rc=1; }
    echo "-- $name: ${took} s, exit $rc"
    cat "$dir/$name.log"
    STEP_LINES+=("$(printf 'ci-step   %-14s %5d s%s' "$name" "$took" "$([ "$rc" = 0 ] || echo '  FAILED')")")
    [ "$rc" = 0 ] || status=1
  done
  rm -rf "$dir"
  return $status
}

# `steps_summary LABEL [STATUS]`: STATUS is the run's exit status when the trap ran other commands first (each
# resets `$?`: a trap that stopped PostgreSQL before it once reported a failed run as passed).
steps_summary() {
  local status=$?
  if [ -n "${2:-}" ]; then status=$2; fi
  if [ -n "$STEP_CURRENT" ]; then
    STEP_LINES+=("$(printf 'ci-step %-16s %5d s  FAILED' "$STEP_CURRENT" $((SECONDS - STEP_CURRENT_STARTED)))")
  fi
  echo "== $1: where the time went"
  printf '%s\n' "${STEP_LINES[@]}"
  printf 'ci-total %d s (%d min %d s), exit %d\n' $((SECONDS - STEPS_STARTED)) $(((SECONDS - STEPS_STARTED) / 60)) $(((SECONDS - STEPS_STARTED) % 60)) "$status"
  exit "$status"
}

# LEFT: the processes (other than this shell and its ancestors) whose environment carries this run's mark. Filled
# in this shell, not in a subshell of its own, so that the check never finds itself.
marked_processes() {
  local mark="GATEHOUSE_RUN_MARK=$GATEHOUSE_RUN_MARK" dir pid p=$$ ancestors=" "
  while [ -n "$p" ] && [ "$p" != 0 ]; do
    ancestors+="$p "
    read -r _ _ _ p _ < "/proc/$p/stat" 2>/dev/null || p=""
  done
  LEFT=()
  for dir in /proc/[0-9]*; do
    pid=${dir#/proc/}
    [[ "$ancestors" == *" $pid "* ]] && continue
    if grep -qzxF "$mark" "$dir/environ" 2>/dev/null; then LEFT+=("$pid"); fi
  done
}

no_leftovers() {
  local pid
  sleep 1   # a process told to stop at its test's end gets a moment
  marked_processes
  if [ ${#LEFT[@]} = 0 ]; then echo "no process of this run is left"; return 0; fi
  echo "processes of this run still running:" >&2
  for pid in "${LEFT[@]}"; do
    [ -e "/proc/$pid" ] && echo "  $pid: $(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | cut -c1-200)" >&2
  done
  for pid in "${LEFT[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  return 1
}
