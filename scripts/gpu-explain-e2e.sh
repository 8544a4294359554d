#!/usr/bin/env bash
# On the H200: code fingerprints and per-line attribution end to end. Records a baseline of the
# reference app by profiling it (1 run) with each kernel's source profile (--source), then checks
# the base app (expect exit 0, "code: 3 kernels unchanged") and the strided, unfolded-loop, fp64
# and redundant-node variants (expect exit 1) with the explain stage on, printing what each
# check said about code and lines and what the explain runs cost. Every ncu run ncugate makes
# passes --clock-control none. Expected device time: about 90 s (record ~25 s, five checks of
# ~6 s plus one explain run of ~5 s per failing kernel).
#
#   OUT=/path scripts/gpu-explain-e2e.sh [NCUGATE_BINARY]   # default target/release/ncugate
#
# Writes $OUT/explain-e2e.tar.gz (every log, JSON report and ncu artifact) and
# $OUT/explain-e2e.md (the summary, also printed).
set -uo pipefail
cd "$(dirname "$0")/.."
ncugate=$(realpath "${1:-target/release/ncugate}")
OUT=${OUT:?set OUT to the folder that collects the results}
w=$(mktemp -d /tmp/ncugate-explain.XXXXXX)
summary=$w/explain-e2e.md
now() { date +%s.%N; }
elapsed() { python3 -c "print(f'{$2 - $1:.1f}')"; }

{ echo "# ncugate explain end-to-end ($(date -u +%FT%TZ))"; echo
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | sed 's/^/GPU: /'
  ncu --version | tail -1 | sed 's/^/ncu: /'; echo; } > "$summary"

make -C kernels > "$w/build.log" 2>&1 || { echo "build failed"; tail -5 "$w/build.log"; }
t0=$(now)
"$ncugate" baseline record --runs 1 --source --out "$w/record" --output "$w/b.json" \
  > "$w/record.log" 2>&1
echo "baseline record --runs 1 --source: exit $? in $(elapsed "$t0" "$(now)") s" >> "$summary"
grep -E "explained|note" "$w/record.log" >> "$summary"
echo >> "$summary"

for v in base strided unfolded-loop fp64 redundant-node; do
  t0=$(now)
  "$ncugate" check --baseline "$w/b.json" --out "$w/check-$v" --json "$w/$v.json" --show all \
    -- kernels/build/graph_app --inject "$v" --iters 3 > "$w/$v.log" 2>&1
  rc=$?
  echo "## $v: exit $rc in $(elapsed "$t0" "$(now)") s" >> "$summary"
  python3 - "$w/$v.json" >> "$summary" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"no JSON report: {e}"); sys.exit()
for n in r.get("notes", []):
    if n.startswith(("code:", "explain", "explained", "kernel renamed")):
        print(f"- note: {n}")
for x in r.get("explain", []):
    print(f"- explained {x['kernel']} (by line: {x['by_line']})")
    for c in x["changes"]:
        counters = ", ".join(f"{k} {a:.4g} -> {b:.4g}" for k, a, b in c["counters"])
        print(f"  - {c['place']}  {c.get('text', '')}  {counters}")
for rule in r.get("rules", []):
    if rule["status"] in ("fail", "warn") and rule.get("why"):
        print(f"- {rule['status']} {rule.get('kernel') or '(total)'} {rule['metric']}: {rule['why']}")
PY
  echo >> "$summary"
done

cat "$summary"
cp "$summary" "$OUT/"
tar czf "$OUT/explain-e2e.tar.gz" -C "$w" .
