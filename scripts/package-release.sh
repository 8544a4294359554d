#!/usr/bin/env bash
# Packs a release of ncugate for x86-64 Linux into OUT_DIR:
#   ncugate-x86_64-linux.tar.gz          ncugate-x86_64-linux/{ncugate (stripped), completions/,
#                                         man/, README.md, CHANGELOG.md, LICENSE}
#   ncugate-x86_64-linux.tar.gz.sha256   `sha256sum` line (the GitHub Action refuses a release
#                                         without it, or with a wrong one)
#
#   scripts/package-release.sh BINARY OUT_DIR
#
# MAX_GLIBC=2.31 also fails when the binary needs a newer glibc than that (the release workflow
# builds on Debian 11 so that it runs on every Linux from Ubuntu 20.04 / Debian 11 on).
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -eq 2 ]] || { echo "usage: $0 BINARY OUT_DIR" >&2; exit 2; }
binary=$1
out=$2
name=ncugate-x86_64-linux
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
pkg=$stage/$name
mkdir -p "$pkg/completions" "$pkg/man" "$out"

cp "$binary" "$pkg/ncugate"
strip "$pkg/ncugate"
# The newest glibc symbol version the binary links against.
glibc=$(objdump -T "$pkg/ncugate" | grep -o 'GLIBC_[0-9.]*' | sed 's/^GLIBC_//' | sort -uV | tail -n 1)
echo "ncugate needs glibc >= $glibc ($(du -h "$pkg/ncugate" | cut -f1) stripped)"
if [[ -n ${MAX_GLIBC:-} && $(printf '%s\n%s\n' "$glibc" "$MAX_GLIBC" | sort -V | tail -n 1) != "$MAX_GLIBC" ]]; then
  echo "error: the binary needs glibc $glibc, newer than MAX_GLIBC=$MAX_GLIBC: build on an older distribution" >&2
  exit 1
fi

"$pkg/ncugate" completions bash >"$pkg/completions/ncugate.bash"
"$pkg/ncugate" completions zsh >"$pkg/completions/_ncugate"
"$pkg/ncugate" completions fish >"$pkg/completions/ncugate.fish"
"$pkg/ncugate" man --dir "$pkg/man" >/dev/null
cp README.md CHANGELOG.md LICENSE "$pkg/"

# Same inputs, same archive: fixed owner, order and times.
tar --owner=0 --group=0 --numeric-owner --sort=name --mtime='2000-01-01 00:00:00Z' \
  -C "$stage" -cf - "$name" | gzip -n >"$out/$name.tar.gz"
(cd "$out" && sha256sum "$name.tar.gz" >"$name.tar.gz.sha256")
echo "packed $out/$name.tar.gz"
cat "$out/$name.tar.gz.sha256"
