#!/usr/bin/env bash
# The release archive as a user gets it, on a GPU runner: packs BINARY with
# scripts/package-release.sh, checks the .sha256, installs the archive into a temporary prefix as
# the book's Getting started says (binary, man pages, completions), and runs the installed
# ncugate: --version (the Cargo.toml version), --help, its man page, doctor, and from an empty
# project folder outside the repository init, baseline record, a passing check and a check of
# an injected regression (exit 1). ncu always runs with --clock-control none (NCUGATE_CLOCK_CONTROL);
# nothing changes clocks, power or MIG, and no background load is started.
#
#   scripts/gpu-release-e2e.sh [NCUGATE_BINARY]      # default target/release/ncugate
#
# Needs nvcc (-arch=sm_90), ncu, strip and objdump. Writes under $OUT (or
# target/gpu-release-e2e): summary.md (one row per step), each step's stdout and stderr, the
# archive and its .sha256 (dist/), and the project's ncugate.toml. Exit 1 when a step's exit
# code or output is not what it should be.
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
binary=$(realpath "${1:-target/release/ncugate}")
out=$(mkdir -p "${OUT:-target/gpu-release-e2e}" && realpath "${OUT:-target/gpu-release-e2e}")
summary=$out/summary.md
status=0
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
export NCUGATE_CLOCK_CONTROL=none

{ echo "# ncugate release archive on a GPU ($(date -u +%FT%TZ))"; echo
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | sed 's/^/GPU: /'
  ncu --version | tail -1 | sed 's/^/ncu: /'
  nvcc --version | tail -1 | sed 's/^/nvcc: /'
  echo "Cargo.toml version: $version"; echo
  echo "| step | expected exit | exit | seconds | what it said |"
  echo "|---|---|---|---|---|"; } > "$summary"

# step NAME EXPECTED [--grep TEXT] COMMAND...: runs COMMAND, records its exit and a line of its
# output (the first that matches TEXT, which must be there, else the first line).
step() {
  local name=$1 want=$2 text="" t0 t1 got said
  shift 2
  if [ "${1:-}" = --grep ]; then text=$2; shift 2; fi
  t0=$(date +%s.%N)
  "$@" > "$out/$name.stdout" 2> "$out/$name.stderr"
  got=$?
  t1=$(date +%s.%N)
  if [ -n "$text" ]; then
    said=$(grep -h -m1 -F -- "$text" "$out/$name.stdout" "$out/$name.stderr" | head -n 1)
    [ -n "$said" ] || { status=1; said="UNEXPECTED: no line with '$text'"; }
  else
    said=$(cat "$out/$name.stdout" "$out/$name.stderr" | grep -m1 . )
  fi
  [ "$got" = "$want" ] || { status=1; said="UNEXPECTED: ${said#UNEXPECTED: }"; }
  said=$(printf '%s' "$said" | cut -c1-160 | sed 's/|/\\|/g')
  printf '| %s | %s | %s | %.1f | %s |\n' "$name" "$want" "$got" \
    "$(python3 -c "print($t1 - $t0)")" "$said" >> "$summary"
}

# The archive and its checksum, as the release workflow makes them.
step package 0 --grep "packed" scripts/package-release.sh "$binary" "$out/dist"
step sha256 0 --grep ": OK" bash -c "cd '$out/dist' && sha256sum --check ncugate-x86_64-linux.tar.gz.sha256"

# Install as Getting started says, into a prefix without root.
work=$(mktemp -d /tmp/ncugate-release.XXXXXX)
prefix=$work/prefix
step unpack 0 tar -xzf "$out/dist/ncugate-x86_64-linux.tar.gz" -C "$work"
d=$work/ncugate-x86_64-linux
step contents 0 --grep "LICENSE" bash -c "cd '$work' && find ncugate-x86_64-linux -type f | sort"
step install 0 bash -c "
  install -Dm755 '$d/ncugate' '$prefix/bin/ncugate' &&
  install -Dm644 -t '$prefix/share/man/man1' '$d'/man/*.1 &&
  install -Dm644 '$d/completions/ncugate.bash' '$prefix/share/bash-completion/completions/ncugate' &&
  install -Dm644 '$d/completions/_ncugate' '$prefix/share/zsh/site-functions/_ncugate' &&
  install -Dm644 '$d/completions/ncugate.fish' '$prefix/share/fish/vendor_completions.d/ncugate.fish'"
export PATH=$prefix/bin:$PATH
step version 0 --grep "ncugate $version" ncugate --version
step help 0 --grep "Exit codes" ncugate --help
if command -v man > /dev/null; then
  step man 0 --grep "EXIT STATUS" env MANWIDTH=100 man -l "$prefix/share/man/man1/ncugate.1"
fi
step doctor 0 ncugate doctor

# A new user's project, outside the repository, with the installed binary.
project=$work/project
mkdir -p "$project"
cp "$repo/kernels/graph_app.cu" "$project/"
cd "$project" || exit 2
step init 0 --grep "wrote" ncugate init --yes \
  --build "nvcc -O3 -lineinfo -std=c++17 -arch=sm_90 -o app graph_app.cu" -- ./app --iters 3
cp ncugate.toml "$out/" 2> /dev/null
step record 0 ncugate baseline record
step check-pass 0 --grep "PASS" ncugate check --no-build --json "$out/check-pass.json"
step check-regression 1 --grep "REGRESSION" ncugate check --no-build --markdown "$out/regression.md" \
  -- ./app --iters 3 --inject redundant-node
cd "$repo" || exit 2
rm -rf "$work"

echo >> "$summary"
if [ "$status" = 0 ]; then echo "All steps as expected." >> "$summary"; else echo "**A step was not as expected.**" >> "$summary"; fi
cat "$summary"
exit "$status"
