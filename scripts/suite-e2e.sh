#!/usr/bin/env bash
# The suite end to end on a GPU: the three workloads of examples/suite/ncugate.toml recorded
# (into examples/suite/baselines/, replacing what is there), checked as two shards one after the
# other and merged, checked unsharded, then one workload (iters6) regressed on purpose (the strided
# variant) and checked as two shards and merged again; a merge with a shard missing; a check with
# no baseline. Run from the repository root after `cargo build --release`:
#   OUT=/tmp/suite bash scripts/suite-e2e.sh     # NCUGATE_BIN picks another binary
# Everything lands in $OUT/suite-e2e.tar.gz; the step table and the verdicts are printed.
set -uo pipefail
: "${OUT:?set OUT to a folder for the logs and reports}"
mkdir -p "$OUT"
B=${NCUGATE_BIN:-$PWD/target/release/ncugate}
CFG=examples/suite/ncugate.toml
L=$OUT/logs; mkdir -p "$L"
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; ncu --version | tail -1; "$B" --version; } > "$L/env.txt" 2>&1
step() { # NAME CMD...: run, time, keep stdout/stderr, print a summary line
  local name=$1; shift
  local t0=$(date +%s.%N)
  "$@" >"$L/$name.out" 2>"$L/$name.err"; local rc=$?
  local t1=$(date +%s.%N)
  printf '%-28s exit %s  %6.1f s   %s\n' "$name" "$rc" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')" "$*" | tee -a "$L/steps.txt"
}
step build make -C kernels
step record "$B" baseline record --config $CFG --runs 3 --no-build
step shard1 "$B" check --config $CFG --shard 1/2 --no-build --json "$OUT/s1.json" --color never
step shard2 "$B" check --config $CFG --shard 2/2 --no-build --json "$OUT/s2.json" --color never
step merge "$B" merge "$OUT/s1.json" "$OUT/s2.json" --expect-shards 2 --json "$OUT/merged.json" --markdown "$OUT/merged.md" --junit "$OUT/merged.xml" --color never
step whole "$B" check --config $CFG --no-build --json "$OUT/whole.json" --color never
# One workload regressed on purpose: iters6 runs the strided variant (same baselines, same thresholds).
sed 's/"--iters", "6"\]/"--iters", "6", "--inject", "strided"]/' $CFG > examples/suite/ncugate.regressed.toml
grep -n strided examples/suite/ncugate.regressed.toml >> "$L/steps.txt"
step reg-shard1 "$B" check --config examples/suite/ncugate.regressed.toml --shard 1/2 --no-build --json "$OUT/r1.json" --color never
step reg-shard2 "$B" check --config examples/suite/ncugate.regressed.toml --shard 2/2 --no-build --json "$OUT/r2.json" --color never
step reg-merge "$B" merge "$OUT/r1.json" "$OUT/r2.json" --expect-shards 2 --json "$OUT/reg-merged.json" --markdown "$OUT/reg-merged.md" --color never
step reg-missing "$B" merge "$OUT/r1.json" --expect-shards 2 --color never
step missing-gpu "$B" check --config $CFG --workload base --no-build --baselines /tmp/empty-baselines --color never
cp -r examples/suite/baselines "$OUT/baselines"
tar -czf "$OUT/suite-e2e.tar.gz" -C "$OUT" logs baselines s1.json s2.json merged.json merged.md merged.xml whole.json r1.json r2.json reg-merged.json reg-merged.md 2>/dev/null
echo "== steps"; cat "$L/steps.txt"
for n in record shard1 shard2 merge whole reg-shard1 reg-shard2 reg-merge reg-missing missing-gpu; do
  echo "== $n (last lines of stdout, stderr)"; grep -E "ncugate suite|recorded|shard" "$L/$n.out" | tail -4; tail -3 "$L/$n.err"
done
rm -rf "$OUT/logs" "$OUT/baselines" "$OUT"/*.json "$OUT"/*.xml
