# shellcheck shell=bash
# The steps of the skip scripts (gpu-skip-e2e.sh, gpu-skip-libraries-e2e.sh), sourced. They use the
# caller's $ncugate, $suite (the suite folder), $out, $summary and $status.
now() { date +%s.%N; }
elapsed() { python3 -c "print(f'{$2 - $1:.2f}')"; }
# sorted WORDS...: the words sorted, one space apart.
sorted() { printf '%s\n' "$@" | sort | tr '\n' ' ' | sed 's/ $//'; }

# step NAME EXPECTED_RUN EXPECTED_SKIP [ENV=VALUE ...] -- ARGS...: one check of the suite, a row of
# the summary (the RUN and SKIP lines seen against those expected); a difference sets status=1.
step() {
  local name=$1 want_run=$2 want_skip=$3; shift 3
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  local t0 t1 rc runs skips
  t0=$(now)
  (cd "$suite" && env "${envs[@]}" GIT_COMMIT="step-$name" "$ncugate" check --no-build \
      --clock-control none --color never --json "$out/$name.json" "$@") \
    > "$out/$name.stdout" 2> "$out/$name.stderr"
  rc=$?
  t1=$(now)
  runs=$(grep -E '^RUN ' "$out/$name.stderr" | awk '{print $2}' | sort | tr '\n' ' ' | sed 's/ $//')
  skips=$(grep -E '^SKIP ' "$out/$name.stdout" | awk '{print $2}' | sort | tr '\n' ' ' | sed 's/ $//')
  local ok=yes
  [ "$rc" = 0 ] || ok=no
  [ "$runs" = "$want_run" ] || ok=no
  [ "$skips" = "$want_skip" ] || ok=no
  [ $ok = yes ] || status=1
  printf '| %s | RUN [%s] SKIP [%s] exit 0 | %s | %s | %s%s | %s |\n' "$name" "$want_run" "$want_skip" \
    "$runs" "$skips" "$rc" "$([ $ok = yes ] || echo ' UNEXPECTED')" "$(elapsed "$t0" "$t1")" >> "$summary"
  echo "$(elapsed "$t0" "$t1")" > "$out/$name.seconds"
}

# record_suite: the suite's baselines from one run each, a line of the summary.
record_suite() {
  local t0 rc
  t0=$(now)
  (cd "$suite" && "$ncugate" baseline record --runs 1 --no-build --clock-control none) \
    > "$out/record.stdout" 2> "$out/record.stderr"
  rc=$?
  echo "baseline record --runs 1 of the suite: exit $rc in $(elapsed "$t0" "$(now)") s" >> "$summary"
  [ $rc = 0 ] || { status=1; tail -5 "$out/record.stderr" >> "$summary"; }
}
