#!/usr/bin/env bash
# On the H200: the explain run profiles the launch that regressed, not the first. Builds the
# reference app with nvcc -arch=sm_90 -lineinfo, records a baseline of the base variant
# (1 run, each kernel's source profile: --source, the first launch), then checks the
# late-gather variant (only the last of finish's 3 launches loads more) with the explain stage
# on, and the base variant as a control. Expect: late-gather exit 1, `finish` failing, the
# explain run's ncu command carrying `-k regex:^finish$ --launch-skip 2 --launch-count 1`, and
# the why naming the gather line of graph_app.cu with "(launch 3 of 3)"; base exit 0. Every
# ncu run passes --clock-control none (ncugate.toml and the explain run). Expected device
# time: about 45 s (record ~25 s, two checks of ~6 s, one explain run of ~5 s).
#
#   OUT=/path scripts/gpu-explain-launch-e2e.sh [NCUGATE_BINARY]   # default target/release/ncugate
#
# Writes $OUT/explain-launch-e2e.tar.gz (every log, JSON report and ncu artifact) and
# $OUT/explain-launch-e2e.md (the summary, also printed).
set -uo pipefail
cd "$(dirname "$0")/.."
ncugate=$(realpath "${1:-target/release/ncugate}")
OUT=${OUT:?set OUT to the folder that collects the results}
w=$(mktemp -d /tmp/ncugate-explain-launch.XXXXXX)
summary=$w/explain-launch-e2e.md
app=$w/graph_app
now() { date +%s.%N; }
elapsed() { python3 -c "print(f'{$2 - $1:.1f}')"; }

{ echo "# ncugate explain: the launch that moved ($(date -u +%FT%TZ))"; echo
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | sed 's/^/GPU: /'
  ncu --version | tail -1 | sed 's/^/ncu: /'; echo; } > "$summary"

nvcc -O3 -lineinfo -std=c++17 -arch=sm_90 -o "$app" kernels/graph_app.cu > "$w/build.log" 2>&1 \
  || { echo "build failed" | tee -a "$summary"; tail -5 "$w/build.log"; }
t0=$(now)
"$ncugate" baseline record --no-build --clock-control none --runs 1 --source --out "$w/record" \
  --output "$w/b.json" -- "$app" --iters 3 > "$w/record.log" 2>&1
echo "baseline record --runs 1 --source (base): exit $? in $(elapsed "$t0" "$(now)") s" >> "$summary"
echo >> "$summary"

for v in late-gather base; do
  t0=$(now)
  "$ncugate" check --no-build --clock-control none --baseline "$w/b.json" --out "$w/check-$v" \
    --json "$w/$v.json" --show all -- "$app" --inject "$v" --iters 3 > "$w/$v.log" 2>&1
  rc=$?
  echo "## $v: exit $rc in $(elapsed "$t0" "$(now)") s" >> "$summary"
  # The explain run's ncu command line, as ncugate logged it.
  grep -rh -- "--section SourceCounters" "$w/check-$v" 2>/dev/null | head -2 | sed 's/^/- ncu: /' >> "$summary"
  python3 - "$w/$v.json" >> "$summary" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"no JSON report: {e}"); sys.exit()
for n in r.get("notes", []):
    if n.startswith(("explain", "explained")):
        print(f"- note: {n}")
for x in r.get("explain", []):
    print(f"- explained {x['kernel']} (launch: {x.get('launch')})")
    for c in x["changes"]:
        counters = ", ".join(f"{k} {a:.4g} -> {b:.4g}" for k, a, b in c["counters"])
        print(f"  - {c['place']}  {c.get('text', '')}  {counters}")
for rule in r.get("rules", []):
    if rule["status"] == "fail":
        print(f"- fail {rule.get('kernel') or '(total)'} {rule['metric']}: {rule.get('why')}")
PY
  echo >> "$summary"
done

cat "$summary"
cp "$summary" "$OUT/"
tar czf "$OUT/explain-launch-e2e.tar.gz" -C "$w" .
