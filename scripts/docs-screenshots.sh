#!/usr/bin/env bash
# Regenerates the screenshots in docs/ from the current binary, in headless Chromium at 1280 and
# 800 px wide: the HTML report of the recorded strided variant (a regression: failing kernels
# open, passing ones folded) and a history trend page of the recorded runs. No GPU needed.
#
#   scripts/docs-screenshots.sh [NCUGATE_BINARY]    # default target/release/ncugate
#
# Needs chromium (Debian: apt-get install chromium). Writes docs/html-report.png,
# docs/html-report-800.png, docs/history-trends.png; the pages stay under target/docs-screenshots/.
set -euo pipefail
cd "$(dirname "$0")/.."
ncugate=$(realpath "${1:-target/release/ncugate}")
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome) || {
  echo "docs-screenshots: no chromium on PATH (apt-get install chromium)" >&2; exit 2; }
out=target/docs-screenshots
rm -rf "$out"; mkdir -p "$out"
fx=fixtures/h200

"$ncugate" baseline record --kernel-key function --output "$out/baseline.json" \
  --input "$fx/graph_app.base.fast.run1.raw.csv" --input "$fx/graph_app.base.fast.run2.raw.csv" \
  --input "$fx/graph_app.base.fast.run3.raw.csv" > /dev/null
set +e
"$ncugate" check --baseline "$out/baseline.json" --input "$fx/graph_app.strided.fast.raw.csv" \
  --html "$out/report" --json "$out/strided.json" > "$out/check.log" 2>&1
[ $? = 1 ] || { echo "docs-screenshots: the strided variant did not fail" >&2; cat "$out/check.log"; exit 1; }
for run in 1 2 3; do
  "$ncugate" check --baseline "$out/baseline.json" --input "$fx/graph_app.base.fast.run$run.raw.csv" \
    --json "$out/base$run.json" > /dev/null 2>&1
  "$ncugate" history record "$out/base$run.json" --commit "c$run" --branch main --history "sqlite:$out/h.sqlite" > /dev/null
done
"$ncugate" history record "$out/strided.json" --commit c4 --branch main --history "sqlite:$out/h.sqlite" > /dev/null
set -e
"$ncugate" history show --history "sqlite:$out/h.sqlite" --html "$out/trends" > /dev/null

shot() {  # shot PAGE PNG WIDTH HEIGHT
  "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --force-device-scale-factor=1 \
    --window-size="$3,$4" --screenshot="$2" "file://$(realpath "$1")" > /dev/null 2>&1
  echo "$2 ($3×$4) from $1"
}
shot "$out/report/index.html" docs/html-report.png 1280 1400
shot "$out/report/index.html" docs/html-report-800.png 800 1400
shot "$out/trends/trends-1.html" docs/history-trends.png 1280 1200
