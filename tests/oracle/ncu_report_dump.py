#!/usr/bin/env python3
"""What NVIDIA's own report reader (the `ncu_report` Python package) reads
from `.ncu-rep` files, as JSON: the oracle that `tests/integration/oracle.rs`
holds ncugate's native reader to.

Usage: ncu_report_dump.py FILE...  (or `-` to read one path a line from stdin)

One JSON line per file, written and flushed as soon as the file is read, so
that a caller can tell which file a crash of the reader was on:

  {"file": F, "ok": true, "launches": [LAUNCH...]}
  {"file": F, "ok": false, "error": "why the reader refused it"}

LAUNCH is {"workload": "kernel"|"range"|"cmdlist"|"graph"|"other",
"mangled", "function", "demangled": the three names, "metrics": {NAME:
[KIND, VALUE, [INSTANCE...]]}}, launches in the reader's order (ranges, then
each range's actions). KIND is "string", "float", "double", "uint32",
"uint64" or "none" (no value of its own); a float that is not finite is the
string "nan", "inf" or "-inf", as JSON has no such numbers.
"""

import json
import math
import sys

import ncu_report

WORKLOADS = {
    ncu_report.IAction.WorkloadType_KERNEL: "kernel",
    ncu_report.IAction.WorkloadType_RANGE: "range",
    ncu_report.IAction.WorkloadType_CMDLIST: "cmdlist",
    ncu_report.IAction.WorkloadType_GRAPH: "graph",
}

M = ncu_report.IMetric
KINDS = {
    M.ValueKind_STRING: "string",
    M.ValueKind_FLOAT: "float",
    M.ValueKind_DOUBLE: "double",
    M.ValueKind_UINT32: "uint32",
    M.ValueKind_UINT64: "uint64",
}


def plain(value):
    """A value JSON can carry."""
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def metric(m):
    kind = KINDS.get(m.kind(), "other") if m.has_value() else "none"
    value = plain(m.value()) if m.has_value() else None
    instances = [plain(m.value(i)) for i in range(m.num_instances())]
    return [kind, value, instances]


def action(a):
    return {
        "workload": WORKLOADS.get(a.workload_type(), "other"),
        "mangled": a.name(a.NameBase_MANGLED),
        "function": a.name(a.NameBase_FUNCTION),
        "demangled": a.name(a.NameBase_DEMANGLED),
        "metrics": {n: metric(a.metric_by_name(n)) for n in a.metric_names()},
    }


def dump(path):
    try:
        context = ncu_report.load_report(path)
    except Exception as e:  # the reader's refusal, whatever its type
        return {"file": path, "ok": False, "error": f"{type(e).__name__}: {e}"}
    ranges = context.num_ranges() if context else None
    if ranges is None:
        return {"file": path, "ok": False, "error": "load_report gave no report"}
    launches = []
    for r in range(ranges):
        rng = context.range_by_idx(r)
        launches.extend(action(rng.action_by_idx(i)) for i in range(rng.num_actions()))
    return {"file": path, "ok": True, "launches": launches}


def clean(value):
    """`value` with every string valid UTF-8: a string the reader decoded from
    invalid bytes holds lone surrogates, which JSON readers refuse; each
    becomes `?`."""
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, list):
        return [clean(v) for v in value]
    if isinstance(value, dict):
        return {clean(k): clean(v) for k, v in value.items()}
    return value


def main(argv):
    paths = [line.rstrip("\n") for line in sys.stdin] if argv == ["-"] else argv
    for path in paths:
        sys.stdout.write(json.dumps(clean(dump(path)), allow_nan=False) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
