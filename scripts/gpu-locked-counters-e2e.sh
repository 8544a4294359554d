#!/usr/bin/env bash
# Trace mode on a GPU: `[gate] locked_counters = "trace"` when ncu may not read the performance
# counters (ERR_NVGPUCTRPERM). Records a baseline of the reference app as root (ncu, 3 runs,
# `--clock-control none`), then checks it where the counters are locked:
#
#   default      a check as it comes: exit 2, ERR_NVGPUCTRPERM and the hint naming trace mode
#   trace-base   `--locked-counters trace` of the unchanged app: exit 0, labelled DEGRADED
#   trace-redundant  `--locked-counters trace` of `--inject redundant-node`: exit 1 (scale x2)
#
# Where the driver keeps the counters to admins (`RmProfilingAdminOnly: 1` in
# /proc/driver/nvidia/params), the three checks run as an unprivileged user (nobody, through
# setpriv) with the real ncu, in a work folder it may write. Where it does not, the script says
# so and runs them as root with a stand-in `ncu` first: a wrapper that prints ncu's
# ERR_NVGPUCTRPERM text (fixtures/reported/ncu.err-nvgpuctrperm.log) and exits 1 — the summary
# names it; the kernel traces are then real all the same (CUPTI activity tracing, as root).
#
#   OUT=/tmp/out scripts/gpu-locked-counters-e2e.sh [NCUGATE_BINARY]   # default target/release/ncugate
#
# Writes under $OUT (or target/gpu-locked-counters-e2e): summary.md (one row per step), each
# step's stdout, stderr and JSON report, and each trace-mode check's kernel traces
# (NAME.trace-N.json), which replace the stand-ins of fixtures/trace-standin. Never changes
# clocks, power or MIG; starts no background load. Exits non-zero when an expectation fails.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
repo=$(pwd)
ncugate=$(realpath "${1:-target/release/ncugate}")
out=$(realpath -m "${OUT:-target/gpu-locked-counters-e2e}")
mkdir -p "$out"
summary=$out/summary.md
status=0

{ echo "# ncugate trace mode (locked performance counters) on a GPU ($(date -u +%FT%TZ))"; echo
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | sed 's/^/GPU: /'
  ncu --version | tail -1 | sed 's/^/ncu: /'
  nvcc --version | tail -1 | sed 's/^/nvcc: /'; echo; } > "$summary"

make -C kernels graph_app ARCH=sm_90 > "$out/build.log" 2>&1 \
  || { echo "build failed: see build.log" >> "$summary"; exit 1; }

# A work folder any user may write: the app, the binary and the baseline copied in (a checkout
# under /root is not readable by nobody), the audit library's cache, each check's artifacts.
work=$(mktemp -d /tmp/ncugate-locked.XXXXXX)
chmod 755 "$work"
cp "$ncugate" "$work/ncugate"
cp kernels/build/graph_app "$work/graph_app"
mkdir -p "$work/cache"
chmod 1777 "$work" "$work/cache"
export NCUGATE_CACHE_DIR=$work/cache

restricted=$(awk -F': *' '/RmProfilingAdminOnly/ {print $2}' /proc/driver/nvidia/params 2>/dev/null)
as=() ncu_flag=()
if [ "$restricted" = "1" ]; then
  echo "Profiling is restricted to admins here (RmProfilingAdminOnly: 1): the checks run as nobody with the real ncu." >> "$summary"
  if [ "$(id -u)" = "0" ] && command -v setpriv > /dev/null; then
    as=(setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$work" NCUGATE_CACHE_DIR="$work/cache")
  else
    echo "Not root (or no setpriv): the checks run as $(id -un), who may lack the counters already." >> "$summary"
  fi
else
  echo "Profiling is NOT restricted here (RmProfilingAdminOnly: ${restricted:-unknown}): the checks run as root with a STAND-IN ncu ($work/locked-ncu) that prints ncu's ERR_NVGPUCTRPERM text from fixtures/reported/ncu.err-nvgpuctrperm.log and exits 1; the kernel traces are real (CUPTI activity tracing as root)." >> "$summary"
  { echo '#!/bin/sh'
    echo '# Stand-in ncu: the counters are open here, so it says what a locked ncu says and exits 1.'
    echo "cat '$repo/fixtures/reported/ncu.err-nvgpuctrperm.log' >&2"
    echo 'exit 1'; } > "$work/locked-ncu"
  chmod 755 "$work/locked-ncu"
  ncu_flag=(--ncu "$work/locked-ncu")
fi
{ echo; echo "| step | as | expected exit | exit | seconds | first line that says why |"
  echo "|---|---|---|---|---|---|"; } >> "$summary"

# step NAME EXPECTED NEEDLE WHO ARGS...: runs ncugate in the work folder as WHO (root or
# locked), records its exit and the line that says why; NEEDLE must be in its output.
step() {
  local name=$1 want=$2 needle=$3 who=$4; shift 4
  local t0 t1 got why runner=()
  [ "$who" = locked ] && runner=("${as[@]}")
  t0=$(date +%s.%N)
  (cd "$work" && "${runner[@]}" ./ncugate "$@") > "$out/$name.stdout" 2> "$out/$name.stderr"
  got=$?
  t1=$(date +%s.%N)
  why=$(grep -h -m1 -E '^ncugate: error|^ncugate: (PASS|REGRESSION|ERROR)' \
    "$out/$name.stderr" "$out/$name.stdout" | head -1 | cut -c1-220 | sed 's/|/\\|/g')
  if [ "$got" != "$want" ]; then
    status=1; why="UNEXPECTED EXIT: $why"
  elif [ -n "$needle" ] && ! grep -q -F -- "$needle" "$out/$name.stdout" "$out/$name.stderr"; then
    status=1; why="MISSING \`$needle\`: $why"
  fi
  local shown=root
  [ "$who" = locked ] && [ ${#as[@]} -gt 0 ] && shown=nobody
  printf '| %s | %s | %s | %s | %.1f | %s |\n' "$name" "$shown" "$want" "$got" \
    "$(python3 -c "print($t1 - $t0)")" "$why" >> "$summary"
  # Keep the kernel traces of a trace-mode step.
  for t in "$work/out-$name"/trace/trace-*.json; do
    [ -f "$t" ] && cp "$t" "$out/$name.$(basename "$t")"
  done
  [ -f "$work/$name.json" ] && cp "$work/$name.json" "$out/$name.json"
}

common=(--no-build --clock-control none --baseline baseline.json)
step record 0 "" root baseline record --runs 3 --no-build --clock-control none \
  --output baseline.json --out out-record -- ./graph_app --iters 3
chmod 644 "$work/baseline.json" 2>/dev/null
step default 2 "ERR_NVGPUCTRPERM" locked check "${common[@]}" "${ncu_flag[@]}" \
  --out out-default --json default.json -- ./graph_app --iters 3
grep -q 'locked_counters = "trace"' "$out/default.stderr" \
  || { status=1; echo "- default: the hint does not name locked_counters = \"trace\"" >> "$summary"; }
step trace-base 0 "(degraded: performance counters locked" locked check "${common[@]}" \
  "${ncu_flag[@]}" --locked-counters trace --out out-trace-base --json trace-base.json \
  -- ./graph_app --iters 3
step trace-redundant 1 "launched 6 times per run, baseline 3" locked check "${common[@]}" \
  "${ncu_flag[@]}" --locked-counters trace --out out-trace-redundant \
  --json trace-redundant.json -- ./graph_app --iters 3 --inject redundant-node
for name in trace-base trace-redundant; do
  python3 - "$out/$name.json" >> "$summary" <<'EOF' || status=1
import json, sys
r = json.load(open(sys.argv[1]))
d = r.get("degraded") or {}
rules = r.get("rules", [])
skipped = sum(1 for x in rules if x.get("status") == "skipped")
print(f"- {sys.argv[1].rsplit('/', 1)[-1]}: outcome {r.get('outcome')}, degraded mode {d.get('mode')!r}, "
      f"{skipped}/{len(rules)} metric checks skipped, mapping: {d.get('mapping')}")
sys.exit(0 if d.get("mode") == "trace" and skipped == len(rules) and rules else 1)
EOF
done

{ echo
  echo "Kernel traces kept: $(find "$out" -maxdepth 1 -name '*.trace-*.json' -printf '%f ' | sort)"
  echo "Work folder: $work"
  if [ "$status" = 0 ]; then echo "All expectations met."; else echo "SOME EXPECTATIONS FAILED."; fi
} >> "$summary"
cat "$summary"
exit "$status"
