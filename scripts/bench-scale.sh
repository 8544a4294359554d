#!/usr/bin/env bash
# bench-scale.sh [NCUGATE ...]: time and peak memory of ncugate at scale, for
# each binary given (default: target/release/ncugate), on inputs built from
# the real H200 export fixtures/h200/graph_app.base.fast.run1.raw.csv:
#
#   config  `baseline record --workload w0 --input base.csv` with an
#           ncugate.toml of N [[workload]] tables (NCUGATE_SCALE_WORKLOADS,
#           default "1000 8000"): reading the config must be linear in N.
#   stdin   `baseline record --input -` of a raw page of about
#           NCUGATE_SCALE_MIB MiB (default 1024; its launch rows repeated, after
#           a `==PROF==` line as ncu prints before the CSV) against the same
#           file given by name: both must stream.
#   kernels `check` of a raw page of NCUGATE_SCALE_KERNELS distinct kernels
#           (default 100000; one launch each, the fixture's rows renamed)
#           against the baseline recorded from it, alone and with --json,
#           --junit and --markdown.
#
# Each line: what, exit code, wall and CPU seconds (user + system), peak RSS
# in MB (the child's rusage, read with wait4: for `sh -c`, the shell's and
# ncugate's together, the largest RSS of the two). Data goes to target/bench-scale/.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
bins=("$@")
[ ${#bins[@]} -gt 0 ] || bins=("$root/target/release/ncugate")
data=$root/target/bench-scale
mkdir -p "$data"
fixture=$root/fixtures/h200/graph_app.base.fast.run1.raw.csv
workloads=${NCUGATE_SCALE_WORKLOADS:-1000 8000}
mib=${NCUGATE_SCALE_MIB:-1024}
kernels=${NCUGATE_SCALE_KERNELS:-100000}

python3 - "$fixture" "$data" "$mib" "$kernels" $workloads <<'EOF'
import os, sys
fixture, data, mib, kernels = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
lines = open(fixture, encoding="utf-8").read().splitlines(keepends=True)
header, units, rows = lines[0], lines[1], lines[2:]
open(os.path.join(data, "base.csv"), "w").write("".join(lines))
for n in map(int, sys.argv[5:]):
    with open(os.path.join(data, f"workloads-{n}.toml"), "w") as f:
        for i in range(n):
            f.write(f'[[workload]]\nname = "w{i}"\ncommand = ["./app", "--case", "{i}"]\ntags = ["t{i % 7}"]\n\n')
# A big raw page: the launch rows repeated, IDs renumbered (same kernels, many launches).
big = os.path.join(data, f"big-{mib}.csv")
if not os.path.exists(big) or os.path.getsize(big) < mib << 20:
    with open(big, "w") as f:
        f.write("==PROF== Connected to process 1 (/app)\n")
        f.write(header + units)
        i, size = 0, 0
        while size < mib << 20:
            for r in rows:
                line = '"%d"' % i + r[r.index(","):]
                f.write(line)
                size += len(line)
                i += 1
# Distinct kernels: each row a kernel of its own (`produce_k17(float *, long)`).
import csv
many = os.path.join(data, f"kernels-{kernels}.csv")
if not os.path.exists(many):
    parsed = list(csv.reader(rows))
    with open(many, "w", newline="") as f:
        f.write(header + units)
        w = csv.writer(f, quoting=csv.QUOTE_ALL, lineterminator="\n")
        for i in range(kernels):
            r = list(parsed[i % len(parsed)])
            r[0] = str(i)
            name = r[4]
            at = name.index("(")
            head = name[:at]
            cut = head.find("<") if "<" in head else len(head)
            r[4] = f"{head[:cut]}_k{i}{name[cut:]}"
            w.writerow(r)
EOF

measure() { # label, then the command; stdout to /dev/null
  local label=$1
  shift
  python3 - "$label" "$@" <<'PY'
import os, sys, time
label, cmd = sys.argv[1], sys.argv[2:]
start = time.monotonic()
pid = os.fork()
if pid == 0:
    fd = os.open(os.devnull, os.O_WRONLY)
    os.dup2(fd, 1)
    os.execvp(cmd[0], cmd)
_, status, ru = os.wait4(pid, 0)
wall = time.monotonic() - start
cpu = ru.ru_utime + ru.ru_stime
print(f"{label:<44} rc {os.waitstatus_to_exitcode(status)}  {wall:8.2f} s wall  {cpu:8.2f} s CPU  {ru.ru_maxrss / 1024:8.1f} MB")
PY
}

for bin in "${bins[@]}"; do
  echo "== $bin ($("$bin" --version))"
  for n in $workloads; do
    dir=$data/config-$n
    rm -rf "$dir" && mkdir -p "$dir" && cp "$data/base.csv" "$dir/"
    cp "$data/workloads-$n.toml" "$dir/ncugate.toml"
    (cd "$dir" && measure "config: $n workloads, record w0" "$bin" baseline record --workload w0 --input base.csv)
  done
  big=$data/big-$mib.csv
  measure "file: $mib MiB raw page" "$bin" baseline record --input "$big" --output "$data/big.json"
  measure "stdin: $mib MiB raw page" sh -c "'$bin' baseline record --input - --output '$data/big-stdin.json' < '$big'"
  many=$data/kernels-$kernels.csv
  "$bin" baseline record --input "$many" --output "$data/kernels.json" >/dev/null
  measure "check: $kernels kernels" "$bin" check --baseline "$data/kernels.json" --input "$many"
  measure "check: $kernels kernels, json+junit+md" "$bin" check --baseline "$data/kernels.json" --input "$many" \
    --json "$data/r.json" --junit "$data/r.xml" --markdown "$data/r.md"
done
