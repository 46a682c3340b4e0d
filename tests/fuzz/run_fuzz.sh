#!/bin/sh
# run_fuzz.sh FUZZER CORPUS SECONDS — runs the libFuzzer target from the saved corpus
# for SECONDS; new inputs go to a temporary folder (the saved corpus is not changed).
# Exit 0: no finding. A finding leaves its reproducer in the temporary folder, named
# in libFuzzer's output (crash-*, leak-*, timeout-*) and copied next to it.
set -eu
fuzzer=$1 corpus=$2 secs=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/vt_fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/new"
cd "$work"
"$fuzzer" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -print_final_stats=1 "$work/new" "$corpus"
