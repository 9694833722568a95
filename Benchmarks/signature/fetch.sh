#!/usr/bin/env bash
# Brings the two research sets the verifier is tuned and evaluated on into a temporary folder
# (or DEST) and prints the folders to give Benchmarks/signature/run.sh:
#
#   Benchmarks/signature/run.sh $(Benchmarks/signature/fetch.sh)
#
# MCYT-100 (k-pratyush/online-signature-verification at 03bf65e8, MCYT_Signature_100/) and SUSIG
# (akshaymal/Online-Signature-Verification, FOR115USERS/PreProcessing/1Dataset/). Their terms are
# research-only: never commit them, copy them into the repository or ship them. SVC2004 is kept for
# independent evaluation and is not used here.
set -euo pipefail
DEST="${1:-$(mktemp -d /tmp/signature-data.XXXXXX)}"
mkdir -p "$DEST"
if [ ! -d "$DEST/MCYT_Signature_100" ]; then
  git clone --quiet --no-checkout https://github.com/k-pratyush/online-signature-verification "$DEST/.mcyt" >&2
  git -C "$DEST/.mcyt" archive 03bf65e8 MCYT_Signature_100 | tar -x -C "$DEST"
  rm -rf "$DEST/.mcyt"
fi
if [ ! -d "$DEST/SUSIG" ]; then
  git clone --quiet --no-checkout --depth 1 https://github.com/akshaymal/Online-Signature-Verification "$DEST/.susig" >&2
  mkdir -p "$DEST/SUSIG"
  git -C "$DEST/.susig" archive HEAD FOR115USERS/PreProcessing/1Dataset/VisualSubCorpus FOR115USERS/PreProcessing/1Dataset/BlindSubCorpus \
    | tar -x -C "$DEST/SUSIG" --strip-components 3
  rm -rf "$DEST/.susig"
fi
echo "$DEST/MCYT_Signature_100 $DEST/SUSIG/VisualSubCorpus"
