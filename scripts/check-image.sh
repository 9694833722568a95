#!/usr/bin/env bash
# The container image for real: built from nothing by scripts/build-image.sh, run with podman as an operator would
# (a read-only root, a volume for its data, only loopback published), then `/health` answers, the README's demo (`gatehouse-demo`, the
# phone-first app: register with an SMS code, log in, confirm the email by its link, restore the password) is driven
# through a pseudo-terminal against it, the account is still there after the container is stopped with SIGTERM and
# started again on the same volume, and the stop was clean (exit status 0). In scripts/full-check.sh.
#
#   bash scripts/check-image.sh
#
# Needs podman (Debian: apt-get install podman; runc too on a machine where crun cannot start containers) and the
# test tools' Python (pexpect), which scripts/test.sh installs into .build/test-venv.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -d /opt/swift/usr/bin ]; then export PATH=/opt/swift/usr/bin:$PATH; fi
TAG=gatehouse:check
PORT="${IMAGE_CHECK_PORT:-18990}"
NAME="gatehouse-check-$$"
VOLUME="gatehouse-check-$$"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/gatehouse-image-check.XXXXXX")"

PYTHON=.build/test-venv/bin/python3
"$PYTHON" -c 'import pexpect, yaml' 2>/dev/null || { echo "check-image: no pexpect or yaml in .build/test-venv (bash scripts/test.sh makes it)" >&2; exit 1; }
# docs/deploy.md's Kubernetes example, for form: what it says is what this check runs.
"$PYTHON" - <<'PY'
import re
import yaml
page = open("docs/deploy.md", encoding="utf-8").read()
documents = list(yaml.safe_load_all(re.search(r"\*\*Kubernetes\.\*\*.*?```yaml\n(.*?)```", page, re.S).group(1)))
kinds = [d["kind"] for d in documents]
assert kinds == ["Secret", "Job", "Deployment", "Service"], kinds
job, deployment = documents[1]["spec"]["template"]["spec"], documents[2]["spec"]["template"]["spec"]
container = deployment["containers"][0]
assert job["containers"][0]["args"] == ["migrate"], job
assert container["readinessProbe"]["httpGet"]["path"] == "/health", container
assert container["livenessProbe"]["httpGet"]["path"] == "/health/live", container
assert container["ports"][0]["containerPort"] == 8080 and deployment["securityContext"]["runAsUser"] == 10001, deployment
assert container["securityContext"]["readOnlyRootFilesystem"] is True
print("check-image: docs/deploy.md's Kubernetes example reads: " + ", ".join(kinds))
PY

bash scripts/build-image.sh "$TAG"

# Inside another container (CI) crun may refuse: cgroups v1 in hybrid mode, or a limit on open files lower than the
# one it sets. runc with cgroupfs and limits within the machine's then start the same image.
PODMAN=(podman)
LIMITS=()
if ! podman run --rm "$TAG" --version >/dev/null 2>&1; then
  PODMAN=(podman --runtime runc --cgroup-manager=cgroupfs)
  LIMITS=(--ulimit nofile=4096:4096 --ulimit nproc=4096:4096)
  echo "check-image: podman's default runtime cannot start a container here; using: ${PODMAN[*]} ${LIMITS[*]}"
fi
cleanup() {
  status=$?
  if [ "$status" != 0 ]; then "${PODMAN[@]}" logs "$NAME" 2>&1 | tail -40 || true; fi
  "${PODMAN[@]}" rm -f "$NAME" >/dev/null 2>&1 || true
  "${PODMAN[@]}" volume rm -f "$VOLUME" >/dev/null 2>&1 || true
  rm -rf "$WORK"
  exit "$status"
}
trap cleanup EXIT
echo "check-image: $("${PODMAN[@]}" run --rm "${LIMITS[@]}" "$TAG" --version)"

start() {
  # A read-only root, as docs/deploy.md's Kubernetes example runs it: the server writes only to its volume and /tmp.
  "${PODMAN[@]}" run -d --read-only --name "$NAME" "${LIMITS[@]}" -p "127.0.0.1:$PORT:8080" -v "$VOLUME:/var/lib/gatehouse" \
    -e GATEHOUSE_ALLOW_DEV_ON_NETWORK=true -e PUBLIC_URL="http://127.0.0.1:$PORT" -e GATEHOUSE_LOG_FORMAT=text "$TAG" >/dev/null
  for _ in $(seq 1 120); do
    if [ "$(curl -s "http://127.0.0.1:$PORT/health" || true)" = ok ]; then return 0; fi
    sleep 0.5
  done
  echo "check-image: /health never answered ok" >&2
  return 1
}
start
echo "check-image: /health answers ok on 127.0.0.1:$PORT"

swift build --package-path Server --product gatehouse-demo
DEMO="$(swift build --package-path Server --show-bin-path)/gatehouse-demo"
"$PYTHON" Server/Tests/GatehouseKitTests/Support/demo_session.py --demo "$DEMO" --server "http://127.0.0.1:$PORT" \
  --session-file "$WORK/session.json"
echo "check-image: the README's demo (gatehouse-demo phone-accounts) works against the container"

"${PODMAN[@]}" stop -t 30 "$NAME" >/dev/null
code="$("${PODMAN[@]}" inspect --format '{{.State.ExitCode}}' "$NAME")"
[ "$code" = 0 ] || { echo "check-image: the server exited with $code on SIGTERM" >&2; exit 1; }
"${PODMAN[@]}" rm "$NAME" >/dev/null
start
# The demo's account, on the volume: the operator's command in the running container finds it.
"${PODMAN[@]}" exec "$NAME" /usr/local/bin/gatehouse accounts show "+79123456789" > "$WORK/show.txt"
grep -q "79123456789" "$WORK/show.txt" || { cat "$WORK/show.txt" >&2; echo "check-image: the account is gone after a restart" >&2; exit 1; }
echo "check-image: stopped cleanly with SIGTERM; started again on its volume, the account is there"
