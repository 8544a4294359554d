#!/usr/bin/env bash
# Compressed reports (.ncu-repz) as ncu itself writes them, read natively, on a GPU machine:
#   1. asks ncu what it says of compressed reports (`ncu --help`), then profiles the reference
#      app (9 launches, the gated metrics) with `--export R.ncu-repz`, and once with `--export D`
#      (no extension) to see which extension ncu adds by default;
#   2. if ncu wrote a .ncu-repz: its first bytes, `zstd -l` (frames, checksum, sizes), whether
#      `zstd -d` inflates it to a report starting with `NVR\0`; then the same baseline natively
#      from R.ncu-repz (no ncu), from the inflated R.ncu-rep, and from ncu's own CSV of
#      R.ncu-repz (`ncu --import … --csv --page raw --print-units base`), and the profiler
#      version each records; with the ncu_rep_raw example built, the raw page it rebuilds from
#      the .ncu-repz against ncu's, byte for byte;
#   3. a profiling run through ncugate (`baseline record --no-build`): which report ncu left in
#      its run folder (run.ncu-rep or run.ncu-repz), and that the record read it.
# An ncu older than 2025.4 writes no .ncu-repz: the summary says NOT TESTED and the script
# exits 3. Exits 1 when an expectation fails, 0 when every one held.
# Needs nvcc (the Makefile builds with -arch=sm_90), ncu, zstd, python3, and a release build of
# ncugate (and, for the raw-page comparison, of `--example ncu_rep_raw`). Every ncu run passes --clock-control none; clocks, power and MIG are left alone; no
# background load is started. Device time: about 20 s.
#
#   OUT=/tmp/out scripts/gpu-ncu-repz-e2e.sh target/release/ncugate
#
# Writes $OUT/summary.md and $OUT/ncu-repz-e2e.tar.gz (logs, pages, baselines, the reports).
set -uo pipefail
cd "$(dirname "$0")/.."
ncugate=$(realpath "${1:-target/release/ncugate}")
OUT=${OUT:?set OUT to the folder that collects the results}
mkdir -p "$OUT"
W=$(mktemp -d /tmp/ncugate-repz.XXXXXX)
R=$W/ncu-repz-e2e; mkdir -p "$R"
S=$R/summary.md
COMMON=(--clock-control none --target-processes all --config-file off --graph-profiling node)
METRICS=$(cat fixtures/h200/metrics.txt)
status=0
fail() { status=1; echo "- FAILED: $*" >> "$S"; }
ok() { echo "- ok: $*" >> "$S"; }
finish() {
  cat "$S"
  cp "$S" "$OUT/summary.md"
  tar czf "$OUT/ncu-repz-e2e.tar.gz" -C "$W" ncu-repz-e2e
  exit "$1"
}

{ echo "# .ncu-repz written by ncu, read natively ($(date -u +%FT%TZ))"; echo
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | sed 's/^/GPU: /'
  ncu --version | tail -1 | sed 's/^/ncu: /'
  zstd --version | sed 's/^/zstd: /'; echo; } > "$S"
ncu --help > "$R/ncu-help.txt" 2>&1
{ echo "What \`ncu --help\` says of compressed reports:"; echo '```'
  grep -i -E -B1 -A3 'repz|compress' "$R/ncu-help.txt" || echo "(nothing)"
  echo '```'; echo; } >> "$S"
make -s -C kernels graph_app > "$R/build.log" 2>&1 || { cat "$R/build.log"; fail "build"; finish 1; }

ncu "${COMMON[@]}" --metrics "$METRICS" -f --export "$W/R.ncu-repz" \
  kernels/build/graph_app --iters 3 > "$R/profile.R.log" 2>&1
echo "- profile --export R.ncu-repz: exit $?" >> "$S"
ncu "${COMMON[@]}" --metrics "$METRICS" -f --export "$W/D" \
  kernels/build/graph_app --iters 3 > "$R/profile.D.log" 2>&1
echo "- profile --export D (no extension): exit $?; ncu wrote: $(cd "$W" && ls D.* 2>/dev/null | tr '\n' ' ')" >> "$S"
ls -l "$W" > "$R/files.txt"

if [ ! -f "$W/R.ncu-repz" ] || ! zstd -t -q "$W/R.ncu-repz" 2>/dev/null; then
  { echo; echo "NOT TESTED: this ncu wrote no Zstandard .ncu-repz (files: $(cd "$W" && ls | tr '\n' ' '))."
    echo "Compressed reports need Nsight Compute 2025.4 or later."; } >> "$S"
  finish 3
fi
echo "- R.ncu-repz first 16 bytes: $(head -c 16 "$W/R.ncu-repz" | od -An -tx1 | tr -s ' ')" >> "$S"
zstd -l -v "$W/R.ncu-repz" > "$R/zstd-list.txt" 2>&1
{ echo '```'; cat "$R/zstd-list.txt"; echo '```'; } >> "$S"
zstd -q -d -f "$W/R.ncu-repz" -o "$W/R.ncu-rep" || fail "zstd -d R.ncu-repz"
if [ "$(head -c 4 "$W/R.ncu-rep" | od -An -tx1 | tr -d ' ')" = "4e565200" ]; then
  ok "R.ncu-repz inflates to a report starting with NVR\\0 ($(stat -c %s "$W/R.ncu-repz") -> $(stat -c %s "$W/R.ncu-rep") bytes)"
else
  fail "R.ncu-repz does not inflate to an NVR report"
fi

# The same baseline natively from the .ncu-repz, from the inflated .ncu-rep, and from ncu's CSV.
ncu --import "$W/R.ncu-repz" --csv --page raw --print-units base > "$W/R.csv" 2> "$R/import.err"
echo "- ncu --import R.ncu-repz --csv --page raw: exit $?" >> "$S"
cp "$W/R.csv" "$R/R.ncu.raw.csv"
# The raw page ncugate's reader rebuilds from the .ncu-repz, byte for byte against ncu's, when the
# example is built (`cargo build --release --example ncu_rep_raw`; NATIVE names another path).
RAW=${NATIVE:-target/release/examples/ncu_rep_raw}
if [ -x "$RAW" ]; then
  "$RAW" "$W/R.ncu-repz" > "$R/R.native.raw.csv" 2> "$R/R.native.err"
  if cmp -s "$R/R.ncu.raw.csv" "$R/R.native.raw.csv"; then
    ok "raw page of R.ncu-repz: identical to ncu's"
  else
    fail "raw page of R.ncu-repz differs from ncu's (R.ncu.raw.csv, R.native.raw.csv)"
  fi
else
  echo "- raw page not compared: no $RAW (build it with cargo build --release --example ncu_rep_raw)" >> "$S"
fi
record() {  # record NAME INPUT [ENV...]: a baseline; fails the script if ncugate does
  local name=$1 input=$2; shift 2
  env "$@" "$ncugate" baseline record --input "$input" --output "$R/b.$name.json" > "$R/record.$name.log" 2>&1
  local rc=$?
  [ "$rc" = 0 ] && ok "baseline record --input $(basename "$input") ($name): exit 0" \
    || fail "baseline record --input $(basename "$input") ($name): exit $rc: $(grep -m1 'error' "$R/record.$name.log")"
}
record repz "$W/R.ncu-repz" NCUGATE_NCU=/nonexistent
record rep "$W/R.ncu-rep" NCUGATE_NCU=/nonexistent
record csv "$W/R.csv"
python3 - "$R" >> "$S" <<'PY' || status=1
import json, os, sys
d = sys.argv[1]
missing = [n for n in ("repz", "rep", "csv") if not os.path.exists(f"{d}/b.{n}.json")]
if missing:
    print(f"- FAILED: no baseline from the {', '.join(missing)}: nothing to compare")
    sys.exit(1)
def load(name, code=True):
    v = json.load(open(f"{d}/b.{name}.json"))
    for k in ("inputs", "details", "created"):
        v.pop(k, None)
    if not code:  # only a report embeds the kernels' code: a CSV's baseline has none
        for k in v.get("kernels", {}).values():
            k.pop("code", None)
    return v
bad = 0
for a, b, code in (("repz", "rep", True), ("repz", "csv", False)):
    same = load(a, code) == load(b, code)
    bad |= not same
    print(f"- {'ok' if same else 'FAILED'}: the baselines from the {a} and the {b} are "
          f"{'identical' if same else 'DIFFERENT'} (but for the inputs{'' if code else ' and code'})")
v = {n: json.load(open(f"{d}/b.{n}.json")).get("profiler_version") for n in ("repz", "rep")}
same = v["repz"] == v["rep"] and v["repz"]
bad |= not same
print(f"- {'ok' if same else 'FAILED'}: profiler_version from the .ncu-repz {v['repz']!r}, "
      f"from the .ncu-rep {v['rep']!r}")
sys.exit(1 if bad else 0)
PY

# A profiling run through ncugate: whichever report ncu wrote is the run's.
rm -rf target/ncugate-repz-e2e
"$ncugate" baseline record --no-build --out target/ncugate-repz-e2e --output "$R/b.run.json" \
  > "$R/record.run.log" 2>&1
rc=$?
found=$(find target/ncugate-repz-e2e -name 'run.ncu-rep*' -printf '%f ' 2>/dev/null)
[ "$rc" = 0 ] && ok "baseline record --no-build (a profiling run): exit 0; report(s) left: $found" \
  || fail "baseline record --no-build: exit $rc; report(s) left: $found: $(grep -m1 'error' "$R/record.run.log")"
cp "$W/R.ncu-repz" "$R/"
[ "$status" = 0 ] && echo "- every expectation held" >> "$S"
finish "$status"
