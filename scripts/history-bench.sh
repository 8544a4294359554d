#!/usr/bin/env bash
# The history store's benchmark: `ncugate history record` of a 30-workload suite report (each
# workload the real check report of the H200 reference app's base run), once per commit for
# COMMITS commits, into SQLite and, given HISTORY_BENCH_POSTGRES=URL, into PostgreSQL; then the
# store's size per run and `history show` of one kernel's series; then what `check --baseline
# history` adds over the same check against the baseline file (median of CHECKS runs each), with
# COMMITS × WORKLOADS runs in the store.
#
#   NCUGATE_BIN=target/release/ncugate COMMITS=200 scripts/history-bench.sh
#   NCUGATE_BIN=target/release/ncugate COMMITS=1000 WORKLOADS=100 scripts/history-bench.sh   # 100k runs
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(realpath "${NCUGATE_BIN:-target/release/ncugate}")
COMMITS=${COMMITS:-200}
CHECKS=${CHECKS:-11}
WORKLOADS=${WORKLOADS:-30}
FIX=$PWD/fixtures/h200
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"

for i in 1 2 3; do cp "$FIX/graph_app.base.fast.run$i.raw.csv" "base$i.csv"; done
"$BIN" baseline record --input base1.csv --input base2.csv --input base3.csv --output b.json >/dev/null 2>&1
"$BIN" check --baseline b.json --input base2.csv --json check.json -q >/dev/null
python3 - "$WORKLOADS" <<'PY'
import json, sys
n = int(sys.argv[1])
report = json.load(open("check.json"))
names = [f"w{i:02}" for i in range(1, n + 1)]
suite = {
    "schema_version": 1, "kind": "suite", "ncugate_version": report["ncugate_version"],
    "outcome": "pass", "exit_code": 0, "suite": names, "planned": names,
    "thresholds_sha256": "0" * 64, "baselines_sha256": "0" * 64,
    "workloads": [{"name": w, "tags": [], "baseline": "b.json", "report": report} for w in names],
}
json.dump(suite, open("suite.json", "w"), indent=2)
PY
values=$(python3 -c 'import json; r=json.load(open("check.json")); print(len(r["rules"]) + sum(1 for s in r["structure"] if s["check"] == "launches"))')
echo "report: $WORKLOADS workloads × $values values each ($(stat -c %s suite.json) bytes)"

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }
bench() { # URL LABEL
  local url=$1 label=$2 times=()
  for i in $(seq 1 "$COMMITS"); do
    local t0
    t0=$(now)
    "$BIN" history record suite.json --commit "$(printf '%040x' "$i")" --branch main --time $((1764547200 + i * 3600)) --history "$url" >/dev/null
    times+=("$(since "$t0")")
  done
  local t0 again show
  t0=$(now); "$BIN" history record suite.json --commit "$(printf '%040x' 1)" --branch main --history "$url" >/dev/null; again=$(since "$t0")
  t0=$(now); "$BIN" history show --workload w07 --kernel 'finish' --metric gpu__time --history "$url" >/dev/null; show=$(since "$t0")
  printf '%s\n' "${times[@]}" | sort -n | awk -v label="$label" -v runs="$((COMMITS * WORKLOADS))" '
    { t[NR] = $1 } END { printf "%s: %d records of %d runs: fastest %.3f s, median %.3f s, slowest %.3f s\n", label, NR, runs / NR, t[1], t[int((NR + 1) / 2)], t[NR] }'
  echo "$label: the same report again (one run, nothing added): $again s; history show of one series: $show s"
}

# check against the baseline file, then against the last 5 accepted runs of workload w07 in the
# store; the median of CHECKS runs each (read only: nothing is recorded). Commits are 40 hex
# digits, as git's.
median() { sort -n | awk '{ t[NR] = $1 } END { printf "%.4f", t[int((NR + 1) / 2)] }'; }
checks() { # URL LABEL
  local url=$1 label=$2 file history
  file=$(for _ in $(seq 1 "$CHECKS"); do
    t0=$(now); "$BIN" check --baseline b.json --input base2.csv -q >/dev/null; since "$t0"; echo; done | median)
  history=$(for _ in $(seq 1 "$CHECKS"); do
    t0=$(now)
    "$BIN" check --baseline history --history "$url" --history-workload w07 --history-record never \
      --input base2.csv -q >/dev/null
    since "$t0"; echo; done | median)
  awk -v l="$label" -v f="$file" -v h="$history" -v runs="$((COMMITS * WORKLOADS))" 'BEGIN {
    printf "%s: check with %d runs in the store: baseline file %.1f ms, --baseline history %.1f ms: +%.1f ms\n",
      l, runs, f * 1000, h * 1000, (h - f) * 1000 }'
}

bench "sqlite:$WORK/h.sqlite" sqlite
size=$(stat -c %s h.sqlite)
per_run=$((size / (COMMITS * WORKLOADS)))
echo "sqlite: $((COMMITS * WORKLOADS)) runs in $size bytes: $per_run bytes per run;" \
  "a year of 40 workloads x 3 GPUs x 20 commits a day (876,000 runs): $(awk -v b="$per_run" 'BEGIN { printf "%.2f", b * 876000 / 1e9 }') GB"
checks "sqlite:$WORK/h.sqlite" sqlite
if [ -n "${HISTORY_BENCH_POSTGRES:-}" ]; then
  bench "$HISTORY_BENCH_POSTGRES" postgres
  checks "$HISTORY_BENCH_POSTGRES" postgres
fi
