#!/usr/bin/env bash
# Prints the change-point test's measured rates (the table in README.md, "How often `history
# changes` is wrong"): false alarms on recorded and resampled A/A GPU noise, detection of planted
# 2/5/10/20% steps. Deterministic (seeded); the test fails when a rate is worse than the one
# published. No GPU needed.
#
#   scripts/changepoint-rates.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --lib change_point_rates_stay_within_the_published_ones -- --nocapture 2>/dev/null |
  grep -E '^\||false alarm'
