#!/usr/bin/env bash
# The SDK package (the repository's root) as an iOS app sees it: resolved alone, its pins hold no server
# dependency. Fails naming every pin outside the SDK's allow-list, so a new dependency of the SDK is a
# decision, never an accident. Its targets are compiled, with the root manifest's own settings, as the server
# package's dependencies (scripts/test.sh's one build); `--build` builds it alone as well (scripts/full-check.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -d /opt/swift/usr/bin ]; then export PATH=/opt/swift/usr/bin:$PATH; fi

rm -f Package.resolved
swift package resolve
python3 - <<'PY'
import json, sys
pins = sorted(p["identity"] for p in json.load(open("Package.resolved"))["pins"])
# What the SDK needs: swift-nio (the PDF signer's buffers; WebSocket on Linux) and what it pulls in,
# swift-crypto (and swift-asn1), GRDB (the messenger's offline store), compress-nio (PDF streams).
# swift-docc-plugin (and its symbolkit) is a command plugin that builds the DocC archives: it never links into an app.
allowed = {"swift-nio", "swift-atomics", "swift-collections", "swift-system", "swift-crypto", "swift-asn1",
           "grdb.swift", "compress-nio", "swift-docc-plugin", "swift-docc-symbolkit"}
server = {"hummingbird", "hummingbird-auth", "hummingbird-websocket", "swift-websocket", "fluent-kit",
          "fluent-sqlite-driver", "fluent-postgres-driver", "postgres-nio", "postgres-kit", "sqlite-nio",
          "sqlite-kit", "sql-kit", "swift-nio-ssl", "swift-prometheus", "async-http-client",
          "swift-service-lifecycle", "swift-mustache", "swift-argument-parser", "swift-metrics"}
print("SDK package pins:", ", ".join(pins))
found_server = [p for p in pins if p in server]
unexpected = [p for p in pins if p not in allowed]
if found_server:
    sys.exit("the SDK package resolves server dependencies: " + ", ".join(found_server))
if unexpected:
    sys.exit("the SDK package resolves pins outside its allow-list: " + ", ".join(unexpected))
PY
if [ "${1:-}" = "--build" ]; then
  swift build
  echo "SDK package: resolves and builds alone"
else
  echo "SDK package: resolves alone with no server dependency"
fi
