#!/usr/bin/env bash
# DCGM and MIG on a real GPU, as far as the machine allows without changing it:
#   - `ncugate doctor`'s DCGM line (is a host engine running?);
#   - `[profile] dcgm = "pause"` around a real ncu run, with the stand-in dcgmi
#     (tests/bin/fixture-dcgmi) first on PATH: its log must read pause, then resume, with ncu's
#     run between them (the run folder's dcgmi.log is kept);
#   - the same with the real dcgmi, only where one is installed and nv-hostengine already runs
#     (this script starts no DCGM);
#   - MIG, only where MIG instances already exist (this script never changes MIG mode): a run
#     pointed at the first instance (CUDA_VISIBLE_DEVICES=MIG-…) records the device name ncu
#     exports for it, the fingerprint with the profile, and the "clocks were not locked" note.
# Every ncu run passes --clock-control none. Nothing is left running.
#
#   scripts/gpu-fleet-e2e.sh [NCUGATE_BINARY]      # default target/release/ncugate
#
# Writes under $OUT (or target/gpu-fleet-e2e): summary.md (one row per step), each step's stdout
# and stderr, the baselines, and the dcgmi logs.
set -uo pipefail
cd "$(dirname "$0")/.."
ncugate=$(realpath "${1:-target/release/ncugate}")
out=$(mkdir -p "${OUT:-target/gpu-fleet-e2e}" && realpath "${OUT:-target/gpu-fleet-e2e}")
summary=$out/summary.md
status=0

{ echo "# ncugate with DCGM and MIG on a GPU ($(date -u +%FT%TZ))"; echo
  nvidia-smi --query-gpu=name,driver_version,mig.mode.current --format=csv,noheader | sed 's/^/GPU (name, driver, MIG mode): /'
  ncu --version | tail -1 | sed 's/^/ncu: /'
  echo "dcgmi: $(command -v dcgmi || echo 'not installed')"
  echo "nv-hostengine running: $(pgrep -x nv-hostengine > /dev/null && echo yes || echo no)"
  echo; echo '```'; nvidia-smi -L; echo '```'; echo
  echo "| step | expected exit | exit | seconds | first line that says why |"
  echo "|---|---|---|---|---|"; } > "$summary"

# step NAME EXPECTED ARGS...: runs ncugate, records its exit and the line that says why.
step() {
  local name=$1 want=$2; shift 2
  local t0 t1 got why
  t0=$(date +%s.%N)
  "$ncugate" "$@" > "$out/$name.stdout" 2> "$out/$name.stderr"
  got=$?
  t1=$(date +%s.%N)
  why=$(grep -h -m1 -E '^ncugate: (error|recorded|PASS|REGRESSION)|^[✓!] DCGM' \
    "$out/$name.stderr" "$out/$name.stdout" | head -1 | cut -c1-200 | sed 's/|/\\|/g')
  [ "$got" = "$want" ] || { status=1; why="UNEXPECTED: $why"; }
  printf '| %s | %s | %s | %.1f | %s |\n' "$name" "$want" "$got" \
    "$(python3 -c "print($t1 - $t0)")" "$why" >> "$summary"
}

# expect NAME CONDITION-TEXT COMMAND...: a check of what a step left, one row.
expect() {
  local name=$1 what=$2; shift 2
  if "$@"; then
    printf '| %s | – | ok | – | %s |\n' "$name" "$what" >> "$summary"
  else
    status=1
    printf '| %s | – | FAILED | – | UNEXPECTED: %s |\n' "$name" "$what" >> "$summary"
  fi
}

make -C kernels all > "$out/build.log" 2>&1 || { echo "build failed" >> "$summary"; exit 1; }
app=(kernels/build/graph_app --iters 3)

# doctor exits 2 where something is missing; its DCGM line is what is kept.
"$ncugate" doctor > "$out/doctor.stdout" 2> "$out/doctor.stderr"
{ echo; echo "doctor (exit $?):"; echo '```'; grep -E 'DCGM|fix if' "$out/doctor.stdout"; echo '```'; echo; } >> "$summary"

# The stand-in dcgmi around a real ncu run.
standin=$out/standin-bin
mkdir -p "$standin"
ln -sf "$(realpath tests/bin/fixture-dcgmi)" "$standin/dcgmi"
export FIXTURE_DCGMI_LOG=$out/standin-dcgmi.calls
rm -f "$FIXTURE_DCGMI_LOG"
PATH="$standin:$PATH" step dcgm-pause-standin 0 baseline record --no-build --dcgm pause \
  --clock-control none --out "$out/work-standin" --output "$out/standin.json" -- "${app[@]}"
unset FIXTURE_DCGMI_LOG
expect dcgm-standin-order "stand-in dcgmi called: pause, then resume" \
  test "$(tr '\n' ' ' < "$out/standin-dcgmi.calls" 2>/dev/null)" = "profile --pause profile --resume "
find "$out/work-standin" -name dcgmi.log -exec cp {} "$out/standin-dcgmi.log" \; -quit

# The real dcgmi, only where DCGM already runs.
if command -v dcgmi > /dev/null && pgrep -x nv-hostengine > /dev/null; then
  step dcgm-pause-real 0 baseline record --no-build --dcgm pause --clock-control none \
    --out "$out/work-real" --output "$out/real-dcgm.json" -- "${app[@]}"
  find "$out/work-real" -name dcgmi.log -exec cp {} "$out/real-dcgmi.log" \; -quit
  # Without the pause: if DCGM profiles, ncu fails and ncugate names it (exit 2); if it does
  # not, the run passes (exit 0). Either is recorded, the line says which.
  "$ncugate" baseline record --no-build --clock-control none --out "$out/work-nopause" \
    --output "$out/nopause.json" -- "${app[@]}" > "$out/dcgm-no-pause.stdout" 2> "$out/dcgm-no-pause.stderr"
  echo "| dcgm-no-pause | 0 or 2 | $? | – | $(grep -h -m1 -E '^ncugate: (error|recorded)' "$out"/dcgm-no-pause.std* | cut -c1-200) |" >> "$summary"
else
  echo "| dcgm-pause-real | – | skipped | – | no dcgmi or no running nv-hostengine (not started here) |" >> "$summary"
fi

# MIG, only where instances exist.
mig=$(nvidia-smi -L | grep -o 'MIG-[0-9a-fA-F-]*' | head -1)
if [ -n "$mig" ]; then
  CUDA_VISIBLE_DEVICES=$mig step mig-record 0 baseline record --no-build --clock-control none \
    --out "$out/work-mig" --output "$out/mig.json" -- "${app[@]}"
  CUDA_VISIBLE_DEVICES=$mig step mig-check 0 check --no-build --clock-control none \
    --out "$out/work-mig-check" --baseline "$out/mig.json" -- "${app[@]}"
  expect mig-fingerprint "the fingerprint names a MIG profile" \
    grep -q ' MIG ' "$out/mig.json"
  expect mig-note "the check says the clocks were not locked" \
    grep -q 'is a MIG instance' "$out/mig-check.stdout"
  python3 -c "import json,sys; print('MIG fingerprint:', json.load(open(sys.argv[1]))['fingerprint'])" "$out/mig.json" >> "$out/mig-fingerprint.txt" 2>&1
else
  echo "| mig | – | skipped | – | no MIG instance on this machine (MIG mode not changed here) |" >> "$summary"
fi

cat "$summary"
exit $status
