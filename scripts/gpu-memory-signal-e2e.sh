#!/usr/bin/env bash
# Device memory while ncu profiles an app: what NVML says the device has in use against what it
# lists per process, for a PyTorch app holding SIZE GiB (default 8) that runs three kernels over
# it. Three ways: the app alone, under ncu with several replay passes per kernel (kernel replay
# saves and restores the memory a kernel may write between passes), and under `ncugate profile`
# (its shared-GPU probe's looks, gpu-looks.jsonl). Evidence for the "memory beyond own" signal:
# memory in use that no listed process holds, while nothing else runs on the GPU.
#
#   scripts/gpu-memory-signal-e2e.sh [NCUGATE_BINARY]      # default target/release/ncugate
#
# Needs ncu, nvidia-smi, python3 with torch. Every ncu run passes --clock-control none; nothing
# else runs on the GPU; no clock, power or MIG setting is changed. About 1 minute on an H100.
# Writes under $OUT (or target/gpu-memory-signal-e2e): summary.md, each way's nvidia-smi looks
# (TIME used_MiB | pid,used_MiB;...), ncu's and ncugate's logs, ncugate's work dir.
set -uo pipefail
cd "$(dirname "$0")/.."
ncugate=$(realpath "${1:-target/release/ncugate}")
out=$(mkdir -p "${OUT:-target/gpu-memory-signal-e2e}" && realpath "${OUT:-target/gpu-memory-signal-e2e}")
SIZE=${SIZE:-8}
cat > "$out/alloc.py" <<'PY'
import sys, torch
gib = int(sys.argv[1])
x = torch.empty(gib << 28, dtype=torch.float32, device="cuda")
for _ in range(3):
    x.add_(1.0)
torch.cuda.synchronize()
print(f"alloc: {gib} GiB, 3 kernels, done", flush=True)
PY
SAMPLER=
sampler() {
  while :; do
    printf '%s %s | %s\n' "$(date +%s.%N)" \
      "$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits)" \
      "$(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits | tr '\n' ';')"
    sleep 0.2
  done > "$1"
}
stop_sampler() { [ -n "$SAMPLER" ] && { kill "$SAMPLER" 2>/dev/null; wait "$SAMPLER" 2>/dev/null; SAMPLER=; }; }
trap stop_sampler EXIT
# way NAME COMMAND...: runs COMMAND with the sampler beside it; prints the largest gap.
way() {
  local name=$1; shift
  sampler "$out/$name.looks" & SAMPLER=$!
  sleep 1
  "$@" > "$out/$name.log" 2>&1; local rc=$?
  sleep 1; stop_sampler
  python3 - "$out/$name.looks" "$name" "$rc" <<'PY'
import sys
rows = []
for line in open(sys.argv[1]):
    try:
        t, rest = line.split(" ", 1)
        used, procs = rest.split("|")
        listed = sum(int(p.split(",")[1]) for p in procs.strip().split(";") if p.strip() and "," in p)
        rows.append((int(used), listed))
    except ValueError:
        pass
idle = min((u - l for u, l in rows), default=0)
gap = max((u - l - idle for u, l in rows), default=0)
print(f"| {sys.argv[2]} | {sys.argv[3]} | {len(rows)} | {max((u for u, _ in rows), default=0)} | {max((l for _, l in rows), default=0)} | {gap} |")
PY
}
{
  echo "# Device memory in use against the processes NVML lists ($(date -u +%FT%TZ))"
  echo
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | sed 's/^/GPU: /'
  ncu --version | tail -1 | sed 's/^/ncu: /'
  echo
  echo "App: a PyTorch process holding $SIZE GiB, three kernels over it. MiB; gap: in use beyond the"
  echo "listed processes' memory and the smallest such excess seen (the idle reservation)."
  echo
  echo "| way | exit | looks | most in use | most listed | largest gap |"
  echo "|---|---|---|---|---|---|"
  way alone python3 "$out/alloc.py" "$SIZE"
  way ncu-kernel-replay ncu --clock-control none --metrics sm__inst_executed.sum,dram__bytes.sum,lts__t_bytes.sum,sm__warps_active.avg.pct_of_peak_sustained_active \
    python3 "$out/alloc.py" "$SIZE"
  way ncugate-profile "$ncugate" profile --no-build --clock-control none --out "$out/work" -- python3 "$out/alloc.py" "$SIZE"
  echo
  echo "ncugate's probe (largest memory beyond own in one look, from gpu-looks.jsonl):"
  find "$out/work" -name gpu-looks.jsonl | while read -r f; do
    python3 - "$f" <<'PY'
import json, sys
looks = [json.loads(l) for l in open(sys.argv[1])]
before = [l for l in looks if l.get("phase") == "before"]
def listed(l): return sum(p.get("memory_bytes") or 0 for p in l.get("processes", []))
def ours(l): return sum(p.get("memory_bytes") or 0 for p in l.get("processes", []) if p.get("ours"))
def used(l): return sum(d.get("memory_used_bytes") or 0 for d in l.get("devices", []))
res = min((used(l) - listed(l) for l in before), default=0)
during = [l for l in looks if l.get("phase") != "before"]
gaps = [used(l) - res - ours(l) for l in during]
print(f"    {sys.argv[1]}: {len(before)} looks before, {len(during)} during; reservation {res/2**20:.0f} MiB; "
      f"beyond own: max {max(gaps, default=0)/2**20:.0f} MiB; ours listed max {max((ours(l) for l in during), default=0)/2**20:.0f} MiB")
PY
  done
  grep -h -i "shared\|memory beyond" "$out/ncugate-profile.log" | head -5 | sed 's/^/    /'
} > "$out/summary.md" 2>&1
cat "$out/summary.md"
