#!/usr/bin/env bash
# A new user on a GPU runner: the installed (release, stripped) ncugate, run from an empty folder
# outside the repository: init (with a GPU: profiles once), baseline record, check (pass and an
# injected regression in a 100-column log), leaks (audit library compiled from the embedded
# source), doctor.
#
#   scripts/gpu-install-e2e.sh [BINARY]     (default target/release/ncugate; log in $OUT/e2e.log)
set -u
REPO=$(cd "$(dirname "$0")/.." && pwd)
BINARY=${1:-$REPO/target/release/ncugate}
OUT=${OUT:-/tmp/issue11-out}
mkdir -p "$OUT"
PREFIX=/tmp/ncugate-install
install -D -m755 "$BINARY" "$PREFIX/bin/ncugate"
export PATH=$PREFIX/bin:$PATH
P=$(mktemp -d /tmp/myproj.XXXX)
cp "$REPO/kernels/graph_app.cu" "$P/"
cd "$P" || exit 2
step() { printf '\n### %s  (t=%ss)\n' "$*" "$SECONDS"; }
{
  step "setup"; echo "project: $P (no repository here: $(git rev-parse --show-toplevel 2>&1 | head -1))"
  command -v ncugate; ncugate --version; ldd --version | head -1; ncu --version | tail -1; nvidia-smi -L
  step "ncugate init"
  ncugate init --build "nvcc -O3 -lineinfo -std=c++17 -arch=sm_90 -o app graph_app.cu" -- ./app --iters 3; echo "exit $?"
  step "ncugate init again (must refuse)"
  ncugate init -- ./app; echo "exit $?"
  step "ncugate.toml"; cat ncugate.toml
  step "ncugate baseline record"
  ncugate baseline record; echo "exit $?"
  step "ncugate check"
  ncugate check --no-build; echo "exit $?"
  step "ncugate check, redundant node injected (stdout not a terminal: 100 columns)"
  ncugate check --no-build --markdown regr.md -- ./app --iters 3 --inject redundant-node >regr.out 2>regr.err; echo "exit $?"
  cat regr.out; echo "--- widest stdout line: $(awk '{ if (length($0) > m) m = length($0) } END { print m }' regr.out) chars"
  tail -3 regr.err
  step "ncugate leaks (base, 200 launches)"
  ncugate leaks --no-build --json leaks.json -- ./app --iters 200; echo "exit $?"
  step "ncugate leaks (leak injected)"
  ncugate leaks --no-build -- ./app --iters 20 --inject leak; echo "exit $?"
  step "ncugate doctor"
  ncugate doctor; echo "exit $?"
  find ~/.cache/ncugate -maxdepth 2 -type f 2>&1 | head
  step "done"
} >"$OUT/e2e.log" 2>&1
cp regr.md leaks.json ncugate.toml "$OUT/" 2>/dev/null
tail -c 11000 "$OUT/e2e.log"
