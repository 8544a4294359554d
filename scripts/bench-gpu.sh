#!/usr/bin/env bash
# What a check costs on a GPU machine, measured the way the README reports it:
#   app       the reference app alone, as ncugate.toml runs it (kernels/build/graph_app --iters 3)
#   ncu       bare ncu with the built-in rules' metrics: the exact command `ncugate check` runs
#   fast      ncugate check                 (fast mode, the default)
#   full      ncugate check --mode full     (--set full plus the gated metrics, both pages imported)
# interleaved (app ncu fast full, app ncu fast full, …) REPS times (default 3, at least 3); it
# prints each one's median, min and max, and the ratios fast/ncu, full/fast and fast/app.
#
#   scripts/bench-gpu.sh [NCUGATE_BINARY]      # default target/release/ncugate
#   REPS=5 scripts/bench-gpu.sh
#
# Needs an NVIDIA GPU, nvcc and ncu. Builds kernels/ (make -C kernels), records a fast-mode
# baseline (3 runs, not timed), then measures. Writes $OUT (default target/bench-gpu)/bench.md
# (the table), bench.tsv (every sample: what, round, seconds, exit code) and the logs. Exits 1
# when a check does not pass (the unchanged app must pass in both modes) or a run fails.
# Every ncu run uses --clock-control none (ncugate.toml's setting); nothing changes clocks.
set -uo pipefail
cd "$(dirname "$0")/.."
ncugate=$(realpath "${1:-target/release/ncugate}")
out=${OUT:-target/bench-gpu}
reps=${REPS:-3}
[ "$reps" -ge 3 ] || { echo "bench-gpu: REPS must be at least 3" >&2; exit 2; }
mkdir -p "$out"
out=$(realpath "$out")
status=0

now() { date +%s%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'; }

make -C kernels > "$out/build.log" 2>&1 || { echo "bench-gpu: make -C kernels failed" >&2; cat "$out/build.log" >&2; exit 2; }
app=(kernels/build/graph_app --iters 3)

# The baseline the checks compare with (fast mode; a full-mode check says so in a note).
"$ncugate" baseline record --runs 3 --no-build --out "$out/record" --output "$out/baseline.json" \
  > "$out/record.log" 2>&1 || { echo "bench-gpu: baseline record failed" >&2; tail -5 "$out/record.log" >&2; exit 2; }

# One untimed check: warms the GPU and the file cache, and tells the exact ncu command it runs.
"$ncugate" check --no-build --baseline "$out/baseline.json" --out "$out/warmup" > "$out/warmup.log" 2>&1
bare=$(sed -n 's/^ncugate: profile: //p' "$out/warmup.log" | head -1)
[ -n "$bare" ] || { echo "bench-gpu: no 'ncugate: profile:' line in $out/warmup.log" >&2; exit 2; }
echo "$bare" > "$out/ncu-command.txt"

run_case() { # CASE ROUND
  local t0 t1 rc
  t0=$(now)
  case $1 in
    app) "${app[@]}" > "$out/app.log" 2>&1 ;;
    ncu) eval "$bare" > "$out/ncu.log" 2>&1 ;;
    fast) "$ncugate" check --no-build --baseline "$out/baseline.json" --out "$out/fast" \
            --json "$out/fast.json" > "$out/fast-$2.log" 2>&1 ;;
    full) "$ncugate" check --mode full --no-build --baseline "$out/baseline.json" --out "$out/full" \
            --json "$out/full.json" > "$out/full-$2.log" 2>&1 ;;
  esac
  rc=$?
  t1=$(now)
  printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$(secs "$t0" "$t1")" "$rc" >> "$out/bench.tsv"
  [ "$rc" = 0 ] || { echo "bench-gpu: $1 (round $2) exited $rc" >&2; status=1; }
}

printf 'what\tround\tseconds\texit\n' > "$out/bench.tsv"
for r in $(seq 1 "$reps"); do
  for c in app ncu fast full; do run_case "$c" "$r"; done
done

gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)
ncu_version=$(ncu --version | tail -1)
passes=$(python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["profiling"][0]; print(p["passes_per_kernel"]["max"])' "$out/fast.json" 2>/dev/null || echo "?")
full_passes=$(python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["profiling"][0]; print(p["passes_per_kernel"]["max"])' "$out/full.json" 2>/dev/null || echo "?")
python3 - "$out/bench.tsv" "$reps" "$gpu" "$ncu_version" "$passes" "$full_passes" > "$out/bench.md" <<'PY'
import csv, statistics, sys, datetime
path, reps, gpu, ncu, passes, full_passes = sys.argv[1:]
rows = list(csv.DictReader(open(path), delimiter="\t"))
by = {}
for r in rows:
    by.setdefault(r["what"], []).append(float(r["seconds"]))
med = {k: statistics.median(v) for k, v in by.items()}
label = {
    "app": "app alone (`graph_app --iters 3`)",
    "ncu": f"bare ncu, built-in metrics ({passes} pass{'' if passes == '1' else 'es'} per kernel)",
    "fast": "`ncugate check` (fast)",
    "full": f"`ncugate check --mode full` ({full_passes} passes per kernel)",
}
print(f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC · {gpu} · {ncu} · "
      f"{reps} interleaved rounds, median (min–max)\n")
print("| what | seconds |")
print("|---|---:|")
for k in ["app", "ncu", "fast", "full"]:
    v = by.get(k, [])
    if v:
        print(f"| {label[k]} | {med[k]:.2f} ({min(v):.2f}–{max(v):.2f}) |")
print()
if all(k in med for k in ["app", "ncu", "fast", "full"]):
    print(f"- fast check ÷ bare ncu: **{med['fast'] / med['ncu']:.2f}×**")
    print(f"- full check ÷ fast check: **{med['full'] / med['fast']:.1f}×**")
    print(f"- fast check ÷ app alone: {med['fast'] / med['app']:.1f}×")
PY
cat "$out/bench.md"
exit $status
