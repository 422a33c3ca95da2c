#!/bin/sh
# Runs every fuzz target for $1 seconds (default 60) on the stable toolchain
# (RUSTC_BOOTSTRAP lets cargo-fuzz use the nightly-only sanitizer flags) and
# prints the executions per target. See docs/reliability.md.
set -eu
cd "$(dirname "$0")"
secs="${1:-60}"
for t in $(RUSTC_BOOTSTRAP=1 cargo fuzz list); do
  mkdir -p "corpus/$t"
  RUSTC_BOOTSTRAP=1 cargo fuzz run -O "$t" "corpus/$t" "seeds/$t" -- \
    -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -max_len=65536 \
    -print_final_stats=1 > "fuzz-$t.log" 2>&1 || { echo "$t: FAILED (see fuzz/fuzz-$t.log)"; continue; }
  printf '%s: %s\n' "$t" "$(grep -E 'stat::number_of_executed_units' "fuzz-$t.log" | awk '{print $2}') executions"
done
