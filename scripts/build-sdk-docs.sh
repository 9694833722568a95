#!/usr/bin/env bash
# The SDK's reference: a DocC archive per module (GatehouseAPI, GatehouseKit, GatehouseScreens, GatehouseSignature),
# built with swift-docc-plugin from the code's comments and each module's catalog, into .build/docs/.
# Prints DocC's coverage of each module (documented types, members, globals) and fails when an
# archive does not build.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -d /opt/swift/usr/bin ]; then export PATH=/opt/swift/usr/bin:$PATH; fi
OUT="$PWD/.build/docs"
mkdir -p "$OUT"
: > "$OUT/coverage.txt"
for target in GatehouseAPI GatehouseKit GatehouseScreens GatehouseSignature; do
  log="$OUT/$target.log"
  if ! swift package --allow-writing-to-directory "$OUT" generate-documentation --target "$target" --output-path "$OUT/$target.doccarchive" \
      --experimental-documentation-coverage --coverage-summary-level brief > "$log" 2>&1; then
    tail -40 "$log"
    echo "build-sdk-docs: the archive of $target did not build" >&2
    exit 1
  fi
  { echo "== $target"; grep -E "^(Types|Members|Globals) " "$log"; } | tee -a "$OUT/coverage.txt"
done
echo "build-sdk-docs: four archives in $OUT (coverage: $OUT/coverage.txt)"
