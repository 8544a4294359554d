#!/usr/bin/env bash
# Offline tests of the Jenkins shared library in jenkins/ (see jenkins/README.md, "Tests").
# On a fresh Debian 12 machine with Rust, git and Node (or none: Debian's nodejs is installed),
# it installs Debian's groovy (and a JRE when java is missing) and npm-groovy-lint, then:
#   1. parses jenkins/vars/ncuGate.groovy and jenkins/Jenkinsfile with Groovy,
#   2. runs jenkins/test/NcuGateTest.groovy: unit checks with stubbed pipeline steps, mutants,
#      and an end-to-end run of the step with a real sh and the real ncugate on fixtures/h200
#      (JENKINS_E2E=0 skips it; NCUGATE_BIN picks the binary, else cargo build --release),
#   3. lints both with npm-groovy-lint (CodeNarc, no server), failing on warnings or errors.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
apt_updated=0
apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  if [ "$apt_updated" = 0 ]; then $SUDO apt-get update -q; apt_updated=1; fi
  $SUDO apt-get install -y -q --no-install-recommends "$@"
}

# --- what the tests need -------------------------------------------------------------------
if ! command -v java >/dev/null 2>&1; then apt_install default-jre-headless; fi
if ! command -v groovy >/dev/null 2>&1; then apt_install groovy; fi
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then apt_install nodejs npm; fi
# Debian's groovy launcher wants JAVA_HOME, else /usr/lib/jvm/default-java (only there with
# default-jre*); take the JDK of the `java` on PATH.
if [ -z "${JAVA_HOME:-}" ] || [ ! -x "${JAVA_HOME}/bin/java" ]; then
  JAVA_HOME="$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")"
  export JAVA_HOME
fi
# Read and write UTF-8 whatever the locale (CI may have none).
export JAVA_OPTS="${JAVA_OPTS:-} -Dfile.encoding=UTF-8"

node_major="$(node --version | sed -E 's/^v([0-9]+).*/\1/')"
# npm-groovy-lint 16 needs Node >= 20; Debian 12's own nodejs is 18, for which 14.4.0 is the last.
if [ "$node_major" -ge 20 ]; then lint_version=16.2.0; else lint_version=14.4.0; fi
lint_dir="${XDG_CACHE_HOME:-$HOME/.cache}/ncugate-jenkins-tests/npm-groovy-lint-$lint_version"
if [ ! -x "$lint_dir/node_modules/.bin/npm-groovy-lint" ]; then
  mkdir -p "$lint_dir"
  npm install --prefix "$lint_dir" --no-audit --no-fund --loglevel=error "npm-groovy-lint@$lint_version"
fi
lint="$lint_dir/node_modules/.bin/npm-groovy-lint"

echo "java: $(java -version 2>&1 | head -1); $(groovy --version); node $(node --version); npm-groovy-lint $lint_version"

# --- 1. syntax ----------------------------------------------------------------------------
echo "== groovy syntax: jenkins/vars/*.groovy, jenkins/Jenkinsfile, jenkins/Jenkinsfile.suite"
groovy jenkins/test/SyntaxCheck.groovy jenkins/vars/ncuGate.groovy jenkins/vars/ncuGateMerge.groovy jenkins/Jenkinsfile jenkins/Jenkinsfile.suite
# The check can fail: a Jenkinsfile with an unbalanced brace does not parse.
probe_dir="$(mktemp -d)"
trap 'rm -rf "$probe_dir"' EXIT
{ cat jenkins/Jenkinsfile; echo '}'; } > "$probe_dir/Jenkinsfile"
if groovy jenkins/test/SyntaxCheck.groovy "$probe_dir/Jenkinsfile" > "$probe_dir/log" 2>&1; then
  cat "$probe_dir/log"; echo "the syntax check passed a Jenkinsfile with an extra }"; exit 1
fi
echo "syntax probe: an extra } fails the check, as it should"

# --- 2. the step with stubbed pipeline steps (+ e2e with the real ncugate) -------------------
e2e_args=()
if [ "${JENKINS_E2E:-1}" != 0 ]; then
  bin="${NCUGATE_BIN:-}"
  if [ -z "$bin" ]; then
    cargo build --release --locked --quiet
    bin=target/release/ncugate
  fi
  e2e_args=(--e2e "$bin")
fi
echo "== groovy jenkins/test/NcuGateTest.groovy ${e2e_args[*]:-}"
groovy jenkins/test/NcuGateTest.groovy --jenkins-dir jenkins "${e2e_args[@]}"

# --- 3. lint ------------------------------------------------------------------------------
echo "== npm-groovy-lint $lint_version (config jenkins/.groovylintrc.json)"
lint_files=(jenkins/Jenkinsfile jenkins/Jenkinsfile.suite jenkins/vars/ncuGate.groovy jenkins/vars/ncuGateMerge.groovy)
lint_log="$probe_dir/lint.log"
"$lint" --noserver --failon warning --config jenkins/.groovylintrc.json "${lint_files[@]}" | tee "$lint_log"
# A lint that found no file would pass silently: check that both were linted.
sed 's/\x1b\[[0-9;]*m//g' "$lint_log" | grep -q "in ${#lint_files[@]} linted files" || { echo "npm-groovy-lint did not lint ${lint_files[*]}"; exit 1; }
# And that the lint can fail: an unused variable in a copy of the Jenkinsfile is a warning.
{ cat jenkins/Jenkinsfile; printf '\nvoid probe() {\n    int unusedProbe = 1\n}\n'; } > "$probe_dir/Jenkinsfile"
if "$lint" --noserver --failon warning --config jenkins/.groovylintrc.json "$probe_dir/Jenkinsfile" > "$probe_dir/log" 2>&1; then
  cat "$probe_dir/log"; echo "npm-groovy-lint passed a Jenkinsfile with an unused variable"; exit 1
fi
echo "lint probe: an unused variable fails the lint, as it should"

echo "jenkins tests passed in $((SECONDS - start)) s"
