#!/usr/bin/env bash
# Brings the research sets the verifier is tuned and evaluated on into a temporary folder (or
# DEST) and prints the folders to give Benchmarks/signature/run.sh:
#
#   Benchmarks/signature/run.sh $(Benchmarks/signature/fetch.sh)
#   Benchmarks/signature/run.sh --loso $(Benchmarks/signature/fetch.sh)
#
# - MCYT-100: k-pratyush/online-signature-verification at 03bf65e8, MCYT_Signature_100/;
# - SUSIG, visual and blind sub-corpora: akshaymal/Online-Signature-Verification,
#   FOR115USERS/PreProcessing/1Dataset/;
# - SigComp 2009, the NFI test set and the NISDCC training set:
#   joel-megre/Online-signature-verification-using-deep-descriptors at af06b8df, SigComp2009/ only.
#
# Their terms are research-only: never commit them, copy them into the repository or ship them.
# SVC2004 is reserved for independent evaluation: nothing of it is read, and of a repository that
# holds a copy only the folders named above are taken. MIRRORS=DIR takes the repositories from
# DIR/owner+name/repo (git directories) instead of cloning them from GitHub.
set -euo pipefail
DEST="${1:-$(mktemp -d /tmp/signature-data.XXXXXX)}"
mkdir -p "$DEST"
# repository (owner/name) → a git directory holding it
repo() {
  if [ -n "${MIRRORS:-}" ]; then echo "$MIRRORS/${1/\//+}/repo"; return; fi
  local dir="$DEST/.git-${1/\//+}"
  [ -d "$dir" ] || git clone --quiet --bare "https://github.com/$1" "$dir" >&2
  echo "$dir"
}
if [ ! -d "$DEST/MCYT_Signature_100" ]; then
  git -C "$(repo k-pratyush/online-signature-verification)" archive 03bf65e8 MCYT_Signature_100 | tar -x -C "$DEST"
fi
if [ ! -d "$DEST/SUSIG" ]; then
  # Each folder's tree on its own: a path beside them (VisualSubCorpus.zip) may be missing from a partial copy.
  for corpus in VisualSubCorpus BlindSubCorpus; do
    mkdir -p "$DEST/SUSIG/$corpus"
    git -C "$(repo akshaymal/Online-Signature-Verification)" archive "HEAD:FOR115USERS/PreProcessing/1Dataset/$corpus" \
      | tar -x -C "$DEST/SUSIG/$corpus"
  done
fi
if [ ! -d "$DEST/SigComp2009" ]; then
  mkdir -p "$DEST/SigComp2009"
  git -C "$(repo joel-megre/Online-signature-verification-using-deep-descriptors)" archive af06b8df \
    SigComp2009/NFI_/ SigComp2009/Training/ | tar -x -C "$DEST/SigComp2009" --strip-components 1
fi
rm -rf "$DEST"/.git-*
echo "$DEST/MCYT_Signature_100 $DEST/SUSIG/VisualSubCorpus $DEST/SUSIG/BlindSubCorpus $DEST/SigComp2009/NFI_ $DEST/SigComp2009/Training"
