#!/usr/bin/env bash
# The server's container image, built from nothing: no base image is pulled. The `gatehouse` binary is built with the
# Swift runtime linked in (`--static-swift-stdlib`), and the image holds only what it needs beside it: the shared
# libraries `ldd` names (glibc's and the few system ones) with the dynamic loader, its resource bundles, the CA
# certificates (TLS to mail relays, push services, payment providers, webhooks), the time zones, a user to run as
# and the data folder. docs/deploy.md, "A container image", says how to run it.
#
#   bash scripts/build-image.sh                  # gatehouse:latest, with podman (or buildah)
#   bash scripts/build-image.sh gatehouse:1.2.0  # another tag
#   IMAGE_CONTEXT=DIR bash scripts/build-image.sh     # only the build context (Containerfile and two tar files) in DIR,
#                                                    # for another tool: docker build -t gatehouse DIR
#
# Needs Swift, ldd, and podman or buildah (Debian: apt-get install podman).
set -euo pipefail
cd "$(dirname "$0")/.."
TAG="${1:-gatehouse:latest}"
SCRATCH=Server/.build/image   # a build folder of its own: its flags differ from the development build's

swift build --package-path Server -c release --static-swift-stdlib --product gatehouse --scratch-path "$SCRATCH"
BIN="$(swift build --package-path Server -c release --static-swift-stdlib --scratch-path "$SCRATCH" --show-bin-path)"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/gatehouse-image.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
CONTEXT="${IMAGE_CONTEXT:-$WORK/context}"
ROOT="$WORK/root"
mkdir -p "$CONTEXT"
mkdir -p "$ROOT/usr/local/bin" "$ROOT/etc/ssl/certs" "$ROOT/tmp" "$ROOT/var/lib/gatehouse"
chmod 1777 "$ROOT/tmp"
# Without the debugging information (two thirds of the file); the symbols stay, for a crash's backtrace.
strip --strip-debug -o "$ROOT/usr/local/bin/gatehouse" "$BIN/gatehouse"
# SwiftPM's resource bundles sit beside the executable, where `Bundle.module` looks first.
for bundle in "$BIN"/*.resources; do
  [ -e "$bundle" ] && cp -R "$bundle" "$ROOT/usr/local/bin/"
done
# Every shared library the binary loads, and the loader, at the paths it looks for them.
ldd "$BIN/gatehouse" | awk '/=> \// { print $3 } /^[ \t]*\/.*ld-linux/ { print $1 }' | sort -u | while read -r library; do
  cp -L --parents "$library" "$ROOT/"
done
cp -L /etc/ssl/certs/ca-certificates.crt "$ROOT/etc/ssl/certs/"
[ -d /usr/share/zoneinfo ] && cp -R --parents /usr/share/zoneinfo "$ROOT/" || true
# A user of its own (not root), and name lookups from /etc/hosts then DNS.
printf 'root:x:0:0:root:/:/nonexistent\ngatehouse:x:10001:10001:gatehouse:/var/lib/gatehouse:/nonexistent\n' > "$ROOT/etc/passwd"
printf 'root:x:0:\ngatehouse:x:10001:\n' > "$ROOT/etc/group"
printf 'hosts: files dns\n' > "$ROOT/etc/nsswitch.conf"
"$ROOT/usr/local/bin/gatehouse" --version >/dev/null   # it runs here, with what it was given
# As tar files, which ADD unpacks with their owners: everything root's, but the data folder the server's user's.
tar -C "$ROOT" --numeric-owner --owner=0 --group=0 --exclude=./var/lib/gatehouse -cf "$CONTEXT/root.tar" .
tar -C "$ROOT" --numeric-owner --owner=10001 --group=10001 --no-recursion -cf "$CONTEXT/data.tar" ./var/lib/gatehouse
cat > "$CONTEXT/Containerfile" <<'EOF'
FROM scratch
ADD root.tar /
ADD data.tar /
# Inside a container the server listens on every address of it; development mode refuses that unless told
# (GATEHOUSE_ALLOW_DEV_ON_NETWORK=true, for a try on a laptop), so a production deployment sets GATEHOUSE_ENV=production.
ENV GATEHOUSE_HOST=0.0.0.0 \
    GATEHOUSE_PORT=8080 \
    DATABASE_URL=/var/lib/gatehouse/gatehouse.sqlite \
    GATEHOUSE_LOG_FORMAT=json
WORKDIR /var/lib/gatehouse
USER 10001:10001
EXPOSE 8080
VOLUME /var/lib/gatehouse
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/gatehouse"]
CMD ["serve"]
EOF
if [ -n "${IMAGE_CONTEXT:-}" ]; then
  echo "build-image: the build context is in $CONTEXT (docker build -t $TAG $CONTEXT)"
  exit 0
fi

if command -v podman >/dev/null; then
  podman build --quiet -t "$TAG" -f "$CONTEXT/Containerfile" "$CONTEXT"
elif command -v buildah >/dev/null; then
  buildah bud --quiet -t "$TAG" -f "$CONTEXT/Containerfile" "$CONTEXT"
else
  echo "build-image: neither podman nor buildah is installed (apt-get install podman)" >&2
  exit 1
fi
echo "build-image: $TAG ($(du -sh "$ROOT" | cut -f1) of files)"
