#!/usr/bin/env bash
# Runs several scripts/gpu-NAME-e2e.sh in one device call and packs what they wrote, small enough
# to bring back (reports, CSVs, built binaries and the apps' caches are left out: the logs, JSON
# reports, summaries and the GPU probe's looks stay). Build on a machine with cargo first:
#
#   cargo build --release --bin ncugate --example ncu_rep_raw
#   mkdir -p target/gpu-bin && cp target/release/ncugate target/release/examples/ncu_rep_raw target/gpu-bin/
#   strip target/gpu-bin/*
#
# then, on the GPU machine, from the checkout (with target/gpu-bin carried along):
#
#   OUT=/some/dir scripts/gpu-batch.sh container:470:N=10,BUDGET_S=420 skip:240
#
# Each argument is NAME:SECONDS[:VAR=VALUE,...]: scripts/gpu-NAME-e2e.sh, stopped after SECONDS,
# with those variables set. Writes $OUT/NAME.log, $OUT/rc.txt (each script's exit and time) and
# $OUT/gpu.tgz (everything the scripts wrote under $OUT/NAME, trimmed), prints each summary.md,
# and then removes everything else under $OUT.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
bin=${BIN:-target/gpu-bin}
ncugate=$(realpath "$bin/ncugate")
raw=$(realpath "$bin/ncu_rep_raw" 2>/dev/null || true)
root=${OUT:?set OUT to the folder to write under}
mkdir -p "$root"
for spec in "$@"; do
  IFS=: read -r name limit envs <<< "$spec"
  mkdir -p "$root/$name"
  start=$(date +%s)
  extra=()
  [ "$name" = decode-budget ] && [ -n "$raw" ] && extra=("$raw")
  # shellcheck disable=SC2086 # VAR=VALUE words, split on purpose
  env ${envs//,/ } OUT="$root/$name" timeout "$limit" "scripts/gpu-$name-e2e.sh" "$ncugate" "${extra[@]}" \
    > "$root/$name.log" 2>&1
  echo "$name rc=$? in $(( $(date +%s) - start )) s" | tee -a "$root/rc.txt"
done
for spec in "$@"; do
  name=${spec%%:*}
  summary=$(find "$root/$name" -name summary.md | head -1)
  echo "=== $name (${summary:-no summary.md})"
  [ -n "$summary" ] && cut -c1-250 "$summary" | head -60
done
cd "$root" || exit 2
tar czf gpu.tgz --exclude='*.tgz' --exclude='*.tar.gz' --exclude='*.csv' \
  --exclude='*.ncu-rep' --exclude='*.ncu-repz' --exclude='*.so' --exclude='graph_app' \
  --exclude='*/cache' \
  -- */ *.log rc.txt 2>/dev/null
ls -la gpu.tgz
# Only the archive and rc.txt are left under $OUT: a device call brings back a few files.
find "$root" -mindepth 1 -maxdepth 1 ! -name gpu.tgz ! -name rc.txt -exec rm -rf {} +
