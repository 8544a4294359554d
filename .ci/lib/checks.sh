# shellcheck shell=bash
# The checks of the offline test scripts in .ci/ (sourced): each prints one ✔ or ✘ line and
# counts it; `report` prints the tally and fails when any check failed.
passed=0
failures=()
ok() {
  printf '  ✔ %s\n' "$1"
  passed=$((passed + 1))
}
bad() {
  printf '  ✘ %s\n' "$1"
  failures+=("$1")
}
# check NAME COMMAND...: passes when COMMAND succeeds.
check() {
  local name=$1
  shift
  if "$@"; then ok "$name"; else bad "$name"; fi
}
# expect NAME ACTUAL EXPECTED
expect() {
  if [[ $2 == "$3" ]]; then ok "$1 = $3"; else bad "$1: got '$2', expected '$3'"; fi
}
# report [WORDS]: "N checks passed, M failed WORDS"; exits 1 when a check failed.
report() {
  echo "  $passed checks passed, ${#failures[@]} failed$*"
  if [[ ${#failures[@]} -gt 0 ]]; then
    printf '  FAILED: %s\n' "${failures[@]}"
    exit 1
  fi
}
