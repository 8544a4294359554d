#!/usr/bin/env bash
# The native .ncu-rep reader end to end on a GPU machine, against `ncu --import`:
#   1. profiles the reference app (9 launches, the gated metrics) into R.ncu-rep, and one `scale`
#      launch with `--set full` into F.ncu-rep (rule results with estimated speedups);
#   2. compares the native raw page of both with `ncu --import … --csv --page raw --print-units
#      base` (cmp, byte for byte), and the native rule rows with ncu's details page (rule name,
#      type, section, description, estimated speedup);
#   3. records a baseline from R.ncu-rep natively and from ncu's CSV of it (same JSON but for
#      provenance and the kernels' code, which only a report carries), then times
#      `ncugate check --input R.ncu-rep` natively and with --import-with-ncu, and
#      `ncu --import` alone (5 runs each: seconds and peak RSS).
# Needs nvcc, ncu, python3, and release builds: `cargo build --release --bin ncugate --example
# ncu_rep_raw`. Every ncu run passes --clock-control none; GPU settings are left alone.
# Device time: about 40 s (two profiles ~10 s, 15 imports by ncu ~12 s, 5 checks through ncu
# ~5 s). Writes $OUT/ncu-rep-e2e.tar.gz (logs, pages, timings, the two reports) and $OUT/summary.md.
#
#   OUT=/tmp/out scripts/gpu-ncu-rep-e2e.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:?set OUT to the folder that collects the results}
NCUGATE=$(realpath "${NCUGATE:-target/release/ncugate}")
RAW=$(realpath "${NATIVE:-target/release/examples/ncu_rep_raw}")
W=$(mktemp -d /tmp/ncugate-rep.XXXXXX)
R=$W/ncu-rep-e2e; mkdir -p "$R"
S=$R/summary.md
COMMON=(--clock-control none --target-processes all --config-file off)
METRICS=$(cat fixtures/h200/metrics.txt)
TIME="python3 scripts/time-rss.py"

{ echo "# native .ncu-rep vs ncu --import ($(date -u +%FT%TZ))"; echo
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | sed 's/^/GPU: /'
  ncu --version | tail -1 | sed 's/^/ncu: /'; echo; } > "$S"
make -s -C kernels graph_app > "$R/build.log" 2>&1 || { cat "$R/build.log"; exit 1; }

ncu "${COMMON[@]}" --graph-profiling node --metrics "$METRICS" -f --export "$W/R" \
  kernels/build/graph_app --iters 3 > "$R/profile.R.log" 2>&1
echo "profile R (9 launches): exit $?" >> "$S"
ncu "${COMMON[@]}" -k regex:^scale --launch-count 1 --set full -f --export "$W/F" \
  kernels/build/graph_app --iters 3 > "$R/profile.F.log" 2>&1
echo "profile F (--set full, one launch): exit $?" >> "$S"
ls -l "$W"/*.ncu-rep >> "$R/sizes.txt"

for rep in R F; do
  ncu --import "$W/$rep.ncu-rep" --csv --page raw --print-units base > "$R/$rep.ncu.raw.csv" 2> "$R/$rep.ncu.err"
  "$RAW" "$W/$rep.ncu-rep" > "$R/$rep.native.raw.csv" 2> "$R/$rep.native.err"
  if cmp -s "$R/$rep.ncu.raw.csv" "$R/$rep.native.raw.csv"; then r=identical; else r=DIFFERENT; fi
  echo "raw page of $rep: $r" >> "$S"
  ncu --import "$W/$rep.ncu-rep" --csv --page details > "$R/$rep.ncu.details.csv" 2>> "$R/$rep.ncu.err"
  "$RAW" --rules "$W/$rep.ncu-rep" > "$R/$rep.native.rules.csv" 2>> "$R/$rep.native.err"
  "$RAW" --empty "$W/$rep.ncu-rep" > "$R/$rep.native.empty.tsv" 2>> "$R/$rep.native.err"
  python3 - "$R/$rep.ncu.details.csv" "$R/$rep.native.rules.csv" >> "$S" <<'PY'
import csv, sys
cols = ["ID", "Section Name", "Rule Name", "Rule Type", "Rule Description",
        "Estimated Speedup Type", "Estimated Speedup"]
def rows(path):
    with open(path, newline="") as f:
        r = [x for x in csv.reader(f) if x and not x[0].startswith("==")]
    if not r or "Rule Name" not in r[0]:
        return []
    h = r[0]
    return [tuple(x[h.index(c)] for c in cols) for x in r[1:] if x[h.index("Rule Name")]]
a, b = rows(sys.argv[1]), rows(sys.argv[2])
same = "identical" if a == b else "DIFFERENT"
print(f"rule rows of {sys.argv[1].split('/')[-1].split('.')[0]}: ncu {len(a)}, native {len(b)}: {same}")
for x, y in zip(a, b):
    if x != y:
        print(f"  first difference:\n    ncu:    {x}\n    native: {y}")
        break
PY
done

# The same baseline from the report and from ncu's CSV of it.
cp "$R/R.ncu.raw.csv" "$W/R.csv"
NCUGATE_NCU=/nonexistent "$NCUGATE" baseline record --input "$W/R.ncu-rep" --output "$R/b.native.json" > "$R/record.native.log" 2>&1
echo "baseline record --input R.ncu-rep without ncu: exit $?" >> "$S"
"$NCUGATE" baseline record --input "$W/R.csv" --output "$R/b.csv.json" > "$R/record.csv.log" 2>&1
python3 - "$R/b.native.json" "$R/b.csv.json" >> "$S" <<'PY'
import json, sys
def load(p):
    v = json.load(open(p))
    for k in ("recorded_at", "inputs", "created", "sources", "wall_seconds"):
        v.pop(k, None)
    # Only a report embeds the kernels' code: a CSV's baseline has none.
    for k in v.get("kernels", {}).values():
        k.pop("code", None)
    return v
print("baselines from the report and from ncu's CSV:",
      "identical" if load(sys.argv[1]) == load(sys.argv[2]) else "DIFFERENT")
PY

echo >> "$S"; echo "| what (5 runs) | seconds | peak RSS KiB |" >> "$S"; echo "|---|---|---|" >> "$S"
n=0
timed() {
  local label=$1; shift; n=$((n + 1))
  echo "$label" > "$R/times.$n.txt"
  for _ in 1 2 3 4 5; do $TIME "$W/out.txt" "$@" >> "$R/times.$n.txt"; done
  python3 - "$R/times.$n.txt" "$label" >> "$S" <<'PY'
import sys, statistics
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if "\t" in l]
s = sorted(float(r[-2]) for r in rows); m = max(int(r[-1]) for r in rows)
rc = sorted({r[-3] for r in rows})
print(f"| {sys.argv[2]} (exit {','.join(rc)}) | {statistics.median(s):.4f} ({s[0]:.4f}–{s[-1]:.4f}) | {m} |")
PY
}
timed "ncugate check --input R.ncu-rep (native)" env NCUGATE_NCU=/nonexistent "$NCUGATE" check --baseline "$R/b.native.json" --input "$W/R.ncu-rep"
timed "ncugate check --input R.ncu-rep --import-with-ncu" "$NCUGATE" check --import-with-ncu --baseline "$R/b.native.json" --input "$W/R.ncu-rep"
timed "ncu --import R.ncu-rep --csv --page raw --print-units base" ncu --import "$W/R.ncu-rep" --csv --page raw --print-units base
timed "native raw page of R (examples/ncu_rep_raw)" "$RAW" "$W/R.ncu-rep"

# The reports themselves (about 1.3 MB), so their pages can be rebuilt offline.
cp "$W/R.ncu-rep" "$W/F.ncu-rep" "$R/"
cat "$S"
tar czf "$OUT/ncu-rep-e2e.tar.gz" -C "$W" ncu-rep-e2e
cp "$S" "$OUT/summary.md"
