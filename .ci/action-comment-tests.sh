#!/usr/bin/env bash
# Offline tests of the action's sticky pull-request comment (.github/action/comment.py through
# .github/action/run.sh): a stub of GitHub's REST API on 127.0.0.1 (.ci/action-test/github_stub.py)
# keeps the comments of each pull request and logs every request, and run.sh is run as the
# runner would run it, on the H200 recordings. Shows the comment created, updated in place,
# skipped per the `comment` input, refused by a read-only token without failing the gate, and
# posted by `command: comment` from a report-dir (the fork pattern's second workflow).
#
#   NCUGATE_BIN=target/release/ncugate .ci/action-comment-tests.sh     # default: target/release, else target/debug
#
# Needs python3 and bash only. Everything goes to target/action-comment-tests/. Exit 0 when every
# check passed, 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
work=$repo/target/action-comment-tests
rm -rf "$work"
mkdir -p "$work"
ncugate=${NCUGATE_BIN:-}
[[ -n $ncugate ]] || { [[ -x target/release/ncugate ]] && ncugate=target/release/ncugate; } || ncugate=target/debug/ncugate
ncugate=$(realpath "$ncugate")

# shellcheck source=.ci/lib/checks.sh
. .ci/lib/checks.sh

fx=fixtures/h200
baseline=$work/baseline.json
"$ncugate" baseline record --kernel-key function --input "$fx/graph_app.base.fast.run1.raw.csv" \
  --output "$baseline" >"$work/record.log" 2>&1
regression_args="--input $fx/graph_app.redundant-node.fast.raw.csv"
pass_args="--input $fx/graph_app.base.fast.run1.raw.csv"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
requests=$work/requests.log
state=$work/comments.json
python3 .ci/action-test/github_stub.py "$port" "$requests" "$state" >"$work/stub.log" 2>&1 &
stub_pid=$!
trap 'kill "$stub_pid" 2>/dev/null || true' EXIT
for _ in $(seq 50); do
  if python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/ping')" 2>/dev/null; then break; fi
  sleep 0.1
done

# event NAME JSON: an event payload file.
event() { printf '%s' "$2" >"$work/event-$1.json"; }
event pr7 '{"pull_request": {"number": 7}}'
event pr8 '{"pull_request": {"number": 8}}'
event push '{"ref": "refs/heads/main"}'

# direct NAME [VAR=value…]: run.sh as the runner runs it; sets d_status and d_log. The requests
# it made are in $work/direct-NAME/requests.
direct() {
  local name=$1
  shift
  local dir=$work/direct-$name
  mkdir -p "$dir/runner-temp"
  : >"$dir/github_output"
  : >"$requests"
  d_log=$dir/log
  d_status=0
  (
    env -u NCUGATE_BASELINE -u NCUGATE_THRESHOLDS -u NCUGATE_CONFIG -u NCUGATE_HISTORY \
      GITHUB_ACTIONS=true GITHUB_OUTPUT="$dir/github_output" GITHUB_STEP_SUMMARY="$dir/summary" \
      RUNNER_TEMP="$dir/runner-temp" GITHUB_REPOSITORY=example/app GITHUB_RUN_ID=42 \
      GITHUB_SERVER_URL=https://github.example GITHUB_SHA=0123456789abcdef0123 \
      GITHUB_API_URL="http://127.0.0.1:$port" GITHUB_EVENT_PATH="$work/event-pr7.json" \
      NCUGATE_ACTION_PATH="$repo" NCUGATE_ACTION_COMMAND=check NCUGATE_ACTION_VERSION="path:$ncugate" \
      NCUGATE_ACTION_BASELINE="$baseline" NCUGATE_ACTION_FAIL_ON_REGRESSION=true \
      NCUGATE_ACTION_GITHUB_TOKEN=stub-token "$@" bash .github/action/run.sh
  ) >"$d_log" 2>&1 || d_status=$?
  cp "$requests" "$dir/requests"
  echo "  [$name] exit $d_status (log: target/action-comment-tests/direct-$name/log)"
}
# made: the requests of the last run, as "METHOD PATH" words on one line.
made() { tr '\n' ' ' <"$requests" | sed 's/ $//'; }
# comments N: the bodies of pull request N's comments, as the stub keeps them.
comments() { python3 -c "import json, sys; print(json.dumps(json.load(open('$state')).get('$1', [])))"; }
count() { python3 -c "import json; print(len(json.load(open('$state')).get('$1', [])))"; }

echo "━━━ sticky pull-request comment (stub API on 127.0.0.1:$port) ━━━"
direct created NCUGATE_ACTION_ARGS="$regression_args"
expect "regression on PR 7, comment on-failure: exit" "$d_status" 1
expect "created: requests" "$(made)" "GET /repos/example/app/issues/7/comments?per_page=100&page=1 POST /repos/example/app/issues/7/comments"
expect "created: PR 7 has one comment" "$(count 7)" 1
check "created: the body starts with the hidden marker" grep -q '"<!-- ncugate -->\\n## ' <(comments 7)
check "created: the body is the Markdown report, failures first" grep -q 'ncugate: regression.*### Why.*FAIL' <(comments 7)
check "created: it links the run's page (the HTML report artifact)" grep -q 'https://github.example/example/app/actions/runs/42' <(comments 7)
check "created: the token is sent" grep -q 'Bearer stub-token' "$work/stub.log"

direct updated NCUGATE_ACTION_ARGS="$pass_args"
expect "pass on PR 7 after the regression: exit" "$d_status" 0
expect "updated: requests" "$(made)" "GET /repos/example/app/issues/7/comments?per_page=100&page=1 PATCH /repos/example/app/issues/comments/1"
expect "updated: PR 7 still has one comment" "$(count 7)" 1
check "updated: the comment now says pass" grep -q 'ncugate: pass' <(comments 7)
check "updated: nothing of the old failure is left" sh -c "! grep -q 'ncugate: regression' '$state'"

direct skipped GITHUB_EVENT_PATH="$work/event-pr8.json" NCUGATE_ACTION_ARGS="$pass_args"
expect "pass on PR 8, comment on-failure: exit" "$d_status" 0
expect "skipped: only the lookup" "$(made)" "GET /repos/example/app/issues/8/comments?per_page=100&page=1"
expect "skipped: PR 8 has no comment" "$(count 8)" 0
check "skipped: says why" grep -q 'passed and has no ncugate comment: none made (comment: on-failure)' "$d_log"

direct never GITHUB_EVENT_PATH="$work/event-pr8.json" NCUGATE_ACTION_COMMENT=never NCUGATE_ACTION_ARGS="$regression_args"
expect "regression on PR 8, comment never: exit" "$d_status" 1
expect "never: no request" "$(made)" ""

direct always GITHUB_EVENT_PATH="$work/event-pr8.json" NCUGATE_ACTION_COMMENT=always NCUGATE_ACTION_ARGS="$pass_args"
expect "pass on PR 8, comment always: exit" "$d_status" 0
expect "always: PR 8 has one comment" "$(count 8)" 1

direct push GITHUB_EVENT_PATH="$work/event-push.json" NCUGATE_ACTION_COMMENT=always NCUGATE_ACTION_ARGS="$regression_args"
expect "a push (no pull request): exit" "$d_status" 1
expect "push: no request" "$(made)" ""
check "push: says why" grep -q 'not a pull request: no comment' "$d_log"

direct fork GITHUB_REPOSITORY=example/forked NCUGATE_ACTION_ARGS="$regression_args"
expect "a read-only token (a fork's PR): exit stays the gate's" "$d_status" 1
check "fork: a warning with the fix" grep -q '^::warning title=ncugate comment::comment on pull request #7 failed: HTTP 403 (the token may not write' "$d_log"

direct no-token NCUGATE_ACTION_GITHUB_TOKEN= NCUGATE_ACTION_ARGS="$regression_args"
expect "no token: exit stays the gate's" "$d_status" 1
expect "no token: no request" "$(made)" ""

# The fork pattern's second workflow: no ncugate, the downloaded report-dir, the artifact's PR number.
direct comment-command NCUGATE_ACTION_COMMAND=comment NCUGATE_ACTION_VERSION=path:/no/such/ncugate \
  NCUGATE_ACTION_REPORT_DIR="$work/direct-created/runner-temp/ncugate" NCUGATE_ACTION_COMMENT_PR=9 \
  GITHUB_EVENT_PATH="$work/event-push.json"
expect "command comment: exit" "$d_status" 0
expect "command comment: requests" "$(made)" "GET /repos/example/app/issues/9/comments?per_page=100&page=1 POST /repos/example/app/issues/9/comments"
check "command comment: the regression's report" grep -q 'ncugate: regression' <(comments 9)
expect "command comment: result output" "$(sed -n 's/^result=//p' "$work/direct-comment-command/github_output")" regression
direct comment-bad-pr NCUGATE_ACTION_COMMAND=comment NCUGATE_ACTION_REPORT_DIR="$work/direct-created/runner-temp/ncugate" \
  NCUGATE_ACTION_COMMENT_PR='9; rm -rf /'
expect "comment-pr that is no number: no request" "$(made)" ""
check "comment-pr that is no number: a warning" grep -q 'comment-pr must be a pull request number' "$d_log"

direct bad-input NCUGATE_ACTION_COMMENT=sometimes
expect "comment=sometimes: exit" "$d_status" 2
check "comment=sometimes: says why" grep -q 'comment must be on-failure, always or never' "$d_log"

kill "$stub_pid" 2>/dev/null || true
wait "$stub_pid" 2>/dev/null || true
trap - EXIT
report ""
