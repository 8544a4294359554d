#!/usr/bin/env bash
# The ncugate composite action's only step (action.yml → runs.steps[0]).
#
# Every input arrives through the environment (action.yml maps `inputs.*` into `env:`), never
# through `${{ }}` inside a script, so no input is ever parsed as shell code. `args` is split
# into words like a shell would split quoted words (xargs' quoting rules: '…', "…", \x), with no
# expansion of any kind.
#
#   NCUGATE_ACTION_PATH                 the action's checkout (github.action_path)
#   NCUGATE_ACTION_REPOSITORY           owner/name of the action (github.action_repository)
#   NCUGATE_ACTION_COMMAND              check | sanitize | leaks | … (default check)
#   NCUGATE_ACTION_BASELINE             → NCUGATE_BASELINE for ncugate
#   NCUGATE_ACTION_THRESHOLDS           → NCUGATE_THRESHOLDS
#   NCUGATE_ACTION_CONFIG               → NCUGATE_CONFIG
#   NCUGATE_ACTION_ARGS                 extra arguments, e.g. `--input run.raw.csv` or `-- app args`
#   NCUGATE_ACTION_VERSION              source | path:/abs/ncugate | <release tag>
#   NCUGATE_ACTION_FAIL_ON_REGRESSION   true | false
#   NCUGATE_ACTION_WORKING_DIRECTORY    where ncugate runs (relative to the workspace)
#   NCUGATE_ACTION_REPORT_DIR           where the reports go (default $RUNNER_TEMP/ncugate): junit.xml,
#                                       summary.md, report.json and html/ (check, sanitize, leaks, merge)
#   NCUGATE_ACTION_SHARD                K/N → --shard K/N (check, baseline record, profile)
#   NCUGATE_ACTION_SHARD_REPORTS        merge: the folder holding the shards' JSON reports
#   NCUGATE_ACTION_EXPECT_SHARDS        merge: N → --expect-shards N
#   NCUGATE_ACTION_HISTORY              → NCUGATE_HISTORY (a secret's postgres:// URL, or sqlite:PATH)
#   NCUGATE_ACTION_HISTORY_RECORD       check: auto | always | never → --history-record
#   NCUGATE_ACTION_COMMENT              on-failure | always | never: the sticky pull-request comment
#                                       (comment.py); command `comment` only posts report-dir's
#                                       summary.md (the second workflow of the fork pattern)
#   NCUGATE_ACTION_GITHUB_TOKEN         the token the comment is made with (github.token)
#   NCUGATE_ACTION_COMMENT_PR           the pull request's number (default: the event's)
#   NCUGATE_ACTION_COMMENT_REPORT_URL   the link under the comment (default: the run's page)
#
# Outputs (GITHUB_OUTPUT): ncugate writes result/regressions/report itself in GitHub mode
# (GITHUB_ACTIONS=true). This script writes them only when ncugate did not: when it could not be
# obtained or started (build failure, missing binary, exit 126/127), on a usage error ncugate
# rejects before it reads any data, or with an ncugate release older than its GitHub mode.
#
# Exit status: 0 pass (or a regression with fail-on-regression=false, with a warning annotation);
# 1 regression; ncugate's own code (2, …) on an error; 2 when ncugate could not be obtained.
set -euo pipefail

# One line per message: inputs echoed here (the ncugate command line) could carry CR/LF, which
# would start a workflow command (`::add-mask::…`) on a line of their own in the job log.
log() {
  local s="$*"
  s=${s//$'\r'/'\r'}
  s=${s//$'\n'/'\n'}
  printf 'ncugate-action: %s\n' "$s" >&2
}

# Annotation text must escape %, CR and LF (the runner's own rules).
escape_data() {
  local s=$1
  s=${s//'%'/'%25'}
  s=${s//$'\r'/'%0D'}
  s=${s//$'\n'/'%0A'}
  printf '%s' "$s"
}
annotate() { printf '::%s title=ncugate::%s\n' "$1" "$(escape_data "$2")"; }

output_file=${GITHUB_OUTPUT:-}
set_output() {
  [[ -n $output_file ]] || return 0
  local value=${2//$'\n'/ }
  printf '%s=%s\n' "$1" "${value//$'\r'/ }" >>"$output_file"
}

# Give up before ncugate ran: result=error, an error annotation, exit 2.
fail_early() {
  annotate error "$1"
  log "error: $1"
  set_output result error
  set_output regressions 0
  set_output report ""
  exit 2
}

command_input=${NCUGATE_ACTION_COMMAND:-check}
version=${NCUGATE_ACTION_VERSION:-source}
fail_on_regression=${NCUGATE_ACTION_FAIL_ON_REGRESSION:-true}
workdir=${NCUGATE_ACTION_WORKING_DIRECTORY:-}
report_dir=${NCUGATE_ACTION_REPORT_DIR:-}
action_path=${NCUGATE_ACTION_PATH:-}

comment=${NCUGATE_ACTION_COMMENT:-on-failure}
case $comment in
  on-failure | always | never) ;;
  *) fail_early "comment must be on-failure, always or never, not '$comment'" ;;
esac

# post_comment RESULT MARKDOWN: the sticky pull-request comment; never changes the exit status.
post_comment() {
  [[ $comment != never ]] || return 0
  if ! command -v python3 >/dev/null 2>&1; then
    annotate warning "comment: $comment needs python3 on the runner: no comment"
    return 0
  fi
  NCUGATE_COMMENT="$comment" NCUGATE_COMMENT_RESULT="$1" NCUGATE_COMMENT_MARKDOWN="$2" \
    NCUGATE_COMMENT_TOKEN="${NCUGATE_ACTION_GITHUB_TOKEN:-}" NCUGATE_COMMENT_PR="${NCUGATE_ACTION_COMMENT_PR:-}" \
    NCUGATE_COMMENT_REPORT_URL="${NCUGATE_ACTION_COMMENT_REPORT_URL:-}" \
    python3 "$action_path/.github/action/comment.py" ||
    annotate warning "comment: comment.py failed (exit $?): no comment"
}

case ${fail_on_regression,,} in
  true | yes | 1) fail_on_regression=true ;;
  false | no | 0) fail_on_regression=false ;;
  *) fail_early "fail-on-regression must be true or false, not '$fail_on_regression'" ;;
esac

# ── The command: one or two plain words (`check`, `baseline record`, …), nothing else. ──────────
read -r -a command_words <<<"$command_input" || true
[[ ${#command_words[@]} -ge 1 && ${#command_words[@]} -le 2 ]] ||
  fail_early "command must be one or two words (e.g. check, sanitize, leaks), not '$command_input'"
for word in "${command_words[@]}"; do
  [[ $word =~ ^[a-z][a-z-]*$ ]] || fail_early "command must be plain ncugate subcommand words, not '$command_input'"
done

# ── Suites: shard K/N of the workloads, or the merge of the shards' reports. ────────────────────
shard=${NCUGATE_ACTION_SHARD:-}
shard_reports=${NCUGATE_ACTION_SHARD_REPORTS:-}
expect_shards=${NCUGATE_ACTION_EXPECT_SHARDS:-}
if [[ -n $shard ]]; then
  if [[ ! $shard =~ ^[1-9][0-9]{0,5}/[1-9][0-9]{0,5}$ ]] || ((${shard%/*} > ${shard#*/})); then
    fail_early "shard must be K/N with 1 <= K <= N (e.g. 2/4), not '$shard'"
  fi
  case "${command_words[*]}" in
    check | "baseline record" | profile) ;;
    *) fail_early "shard applies to check, baseline record and profile, not to '$command_input'" ;;
  esac
fi
if [[ ${command_words[0]} == merge ]]; then
  [[ -n $shard_reports ]] ||
    fail_early "command merge needs shard-reports: the folder the shards' report-dirs were downloaded into"
  [[ $shard_reports == /* ]] || shard_reports="$PWD/$shard_reports"
  [[ -d $shard_reports ]] || fail_early "shard-reports '$shard_reports' is not a folder (did any shard upload its reports?)"
  [[ -z $expect_shards || $expect_shards =~ ^[1-9][0-9]{0,5}$ ]] ||
    fail_early "expect-shards must be a number of shards, not '$expect_shards'"
elif [[ -n $shard_reports || -n $expect_shards ]]; then
  fail_early "shard-reports and expect-shards apply to command merge only, not to '$command_input'"
fi

# ── History: check records its run on [history] branches only (GITHUB_REF_NAME); a pull request's
# build (`12/merge`) reads and never writes unless history-record says always. ──────────────────
history_record=${NCUGATE_ACTION_HISTORY_RECORD:-}
case $history_record in
  "" | auto | always | never) ;;
  *) fail_early "history-record must be auto, always or never, not '$history_record'" ;;
esac
if [[ -n $history_record && ${command_words[*]} != check ]]; then
  fail_early "history-record applies to command check only, not to '$command_input'"
fi

# ── args: split with quote handling but no expansion (xargs), checked for unbalanced quotes. ──
extra_args=()
if [[ -n ${NCUGATE_ACTION_ARGS:-} ]]; then
  words_file=$(mktemp)
  trap 'rm -f "$words_file"' EXIT
  if ! printf '%s' "$NCUGATE_ACTION_ARGS" | xargs -r printf '%s\0' >"$words_file"; then
    fail_early "args could not be split into words (an unbalanced quote?): $NCUGATE_ACTION_ARGS"
  fi
  mapfile -d '' -t extra_args <"$words_file"
fi

# ── Where the reports go: absolute, so that the `report` output can be uploaded from anywhere. ──
[[ -n $report_dir ]] || report_dir="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/ncugate"
[[ $report_dir == /* ]] || report_dir="$PWD/$report_dir"

# ── command comment: post report-dir's Markdown report, made by an earlier job; no ncugate. ──────
if [[ ${command_words[*]} == comment ]]; then
  [[ -s $report_dir/summary.md ]] ||
    fail_early "command comment posts report-dir's summary.md, but '$report_dir/summary.md' is missing or empty"
  result=error
  outcome=$(grep -o -m 1 '"outcome": *"[a-z]*"' "$report_dir/report.json" 2>/dev/null || true)
  case $outcome in
    *'"pass"') result=pass ;;
    *'"regression"') result=regression ;;
  esac
  post_comment "$result" "$report_dir/summary.md"
  set_output result "$result"
  exit 0
fi

# ── Obtain ncugate. ───────────────────────────────────────────────────────────────────────────────
case $version in
  source)
    [[ -n $action_path && -f $action_path/Cargo.toml ]] ||
      fail_early "version 'source' builds the action's own checkout, but there is no Cargo.toml in '$action_path' (github.action_path)"
    command -v cargo >/dev/null 2>&1 ||
      fail_early "version 'source' needs cargo on PATH (install Rust on the runner), or use version: path:/abs/ncugate or a release tag"
    echo "::group::ncugate: cargo build --release --locked (in $action_path)"
    build_status=0
    (cd "$action_path" && CARGO_TARGET_DIR="$action_path/target" cargo build --release --locked) || build_status=$?
    echo "::endgroup::"
    [[ $build_status == 0 ]] || fail_early "building ncugate from source failed (cargo exit $build_status); see the build log above"
    ncugate="$action_path/target/release/ncugate"
    ;;
  path:*)
    ncugate=${version#path:}
    [[ $ncugate == /* ]] || fail_early "version path: needs an absolute path to the ncugate binary, not '$ncugate'"
    ;;
  *)
    [[ $version =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ ]] ||
      fail_early "version must be 'source', 'path:/abs/ncugate' or a release tag such as v0.1.0, not '$version'"
    [[ $(uname -s)/$(uname -m) == Linux/x86_64 ]] ||
      fail_early "release binaries are built for x86_64 Linux only; use version: source on $(uname -s)/$(uname -m)"
    repository=${NCUGATE_ACTION_REPOSITORY:-}
    [[ -n $repository ]] || repository=${GITHUB_REPOSITORY:-}
    [[ $repository =~ ^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$ ]] ||
      fail_early "cannot tell which repository's releases to download from ('$repository')"
    server=${GITHUB_SERVER_URL:-https://github.com}
    url="$server/$repository/releases/download/$version/ncugate-x86_64-linux.tar.gz"
    install_dir="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/ncugate-bin/$version"
    mkdir -p "$install_dir"
    echo "::group::ncugate: download $url"
    download_status=0
    rm -f "$install_dir/ncugate.tar.gz" "$install_dir/ncugate.tar.gz.sha256"
    curl -fsSL --retry 3 -o "$install_dir/ncugate.tar.gz" "$url" || download_status="download failed: curl exit $?"
    # The checksum is not optional: no .sha256, a malformed one or a mismatch is an error.
    if [[ $download_status == 0 ]]; then
      if ! curl -fsSL --retry 3 -o "$install_dir/ncugate.tar.gz.sha256" "$url.sha256"; then
        download_status="the release has no $url.sha256; refusing a binary that cannot be checked"
      else
        expected=$(cut -d' ' -f1 <"$install_dir/ncugate.tar.gz.sha256")
        actual=$(sha256sum "$install_dir/ncugate.tar.gz" | cut -d' ' -f1)
        if [[ ! $expected =~ ^[0-9a-f]{64}$ ]]; then
          download_status="$url.sha256 holds no sha256 checksum"
        elif [[ $expected != "$actual" ]]; then
          download_status="sha256 mismatch: the release says $expected, the download is $actual"
        else
          echo "sha256 $actual checked"
        fi
      fi
    fi
    [[ $download_status == 0 ]] && { tar -xzf "$install_dir/ncugate.tar.gz" -C "$install_dir" || download_status="the archive does not unpack (tar)"; }
    echo "::endgroup::"
    if [[ $download_status != 0 ]]; then
      rm -f "$install_dir/ncugate.tar.gz"
      fail_early "could not install ncugate $version from $url: $download_status"
    fi
    ncugate=$(find "$install_dir" -type f -name ncugate -perm -u+x -print -quit)
    [[ -n $ncugate ]] || fail_early "the release archive $url holds no executable named ncugate"
    ;;
esac

# ── Run it. ───────────────────────────────────────────────────────────────────────────────────────
if [[ -n $workdir ]]; then
  cd -- "$workdir" 2>/dev/null || fail_early "working-directory '$workdir' does not exist"
fi

argv=("${command_words[@]}")
case ${command_words[0]} in
  check | sanitize | leaks | merge)
    mkdir -p -- "$report_dir"
    junit="$report_dir/junit.xml" markdown="$report_dir/summary.md" json="$report_dir/report.json"
    html="$report_dir/html"
    # Never leave a stale report for the upload step.
    rm -f -- "$junit" "$markdown" "$json"
    rm -rf -- "$html"
    argv+=(--junit "$junit" --markdown "$markdown" --json "$json" --html "$html")
    ;;
  *) json="" markdown="" ;;
esac
[[ -z $shard ]] || argv+=(--shard "$shard")
[[ -z $history_record ]] || argv+=(--history-record "$history_record")
if [[ ${command_words[0]} == merge ]]; then
  [[ -z $expect_shards ]] || argv+=(--expect-shards "$expect_shards")
  # Every JSON report under the folder, in a stable order (download-artifact puts each shard's
  # artifact in its own subfolder).
  mapfile -d '' -t shard_files < <(find "$shard_reports" -type f -name '*.json' -print0 | sort -z)
  [[ ${#shard_files[@]} -gt 0 ]] ||
    fail_early "no JSON report under shard-reports '$shard_reports' (did the shards upload their report-dir?)"
  argv+=("${shard_files[@]}")
fi
argv+=("${extra_args[@]}")

# baseline / thresholds / config through ncugate's own variables: each subcommand that has the
# option reads it, the others ignore it, and a flag in `args` still wins (flag over variable).
[[ -z ${NCUGATE_ACTION_BASELINE:-} ]] || export NCUGATE_BASELINE="$NCUGATE_ACTION_BASELINE"
[[ -z ${NCUGATE_ACTION_THRESHOLDS:-} ]] || export NCUGATE_THRESHOLDS="$NCUGATE_ACTION_THRESHOLDS"
[[ -z ${NCUGATE_ACTION_CONFIG:-} ]] || export NCUGATE_CONFIG="$NCUGATE_ACTION_CONFIG"
[[ -z ${NCUGATE_ACTION_HISTORY:-} ]] || export NCUGATE_HISTORY="$NCUGATE_ACTION_HISTORY"

output_size_before=0
if [[ -n $output_file && -f $output_file ]]; then
  output_size_before=$(wc -c <"$output_file")
fi

log "$ncugate ${argv[*]}   (in $PWD)"
status=0
"$ncugate" "${argv[@]}" || status=$?
log "ncugate exited with $status"

# ── Outputs ncugate did not write (see the header). ─────────────────────────────────────────────
if [[ -n $output_file ]]; then
  written=""
  if [[ -f $output_file ]]; then
    written=$(tail -c +"$((output_size_before + 1))" "$output_file" | grep -E '^result=' || true)
  fi
  if [[ -z $written ]]; then
    case $status in
      0) result=pass ;;
      1) result=regression ;;
      *) result=error ;;
    esac
    report=""
    if [[ -n $json && -s $json ]]; then
      report=$json
    elif [[ -n $markdown && -s $markdown ]]; then
      report=$markdown
    fi
    regressions=0
    if [[ $status == 1 && -n $json && -s $json ]]; then
      # Each failed check is one `"status": "fail"` entry of the JSON report (schema_version 1).
      regressions=$(grep -c '"status": "fail"' "$json" || true)
    fi
    log "ncugate wrote no step outputs; writing result=$result regressions=$regressions"
    set_output result "$result"
    set_output regressions "$regressions"
    set_output report "$report"
  fi
fi

case $status in
  0) result=pass ;;
  1) result=regression ;;
  *) result=error ;;
esac
# The comment reports what ncugate wrote; a command without a Markdown report makes none.
[[ -z $markdown ]] || post_comment "$result" "$markdown"

case $status in
  0) exit 0 ;;
  1)
    if [[ $fail_on_regression == true ]]; then
      exit 1
    fi
    annotate warning "performance regression found, but fail-on-regression is false: the step passes (see the report)"
    exit 0
    ;;
  126 | 127)
    annotate error "ncugate could not be started ('$ncugate', exit $status): not found or not executable"
    exit "$status"
    ;;
  *) exit "$status" ;;
esac
