#!/usr/bin/env bash
# Runs the CI command (.ci/run) N times, each on a fresh clone of the committed HEAD as it is when
# the run starts, and writes which tests failed in which run. Every second run has one core kept
# busy by a load this script starts and stops itself (a busy loop), since most flakes show only
# when the suite is starved.
#
#   scripts/flake-hunt.sh          # 6 runs: 3 plain, 3 under load
#   scripts/flake-hunt.sh 10 DIR   # 10 runs, results in DIR (default target/flake-hunt)
#   FLAKE_HUNT_LOAD=every scripts/flake-hunt.sh 3   # every run under load (none: no run)
#
# Writes DIR/results.md (a row per run: commit, load, minutes, exit, tests, failed tests) and
# keeps each run's console log and failed tests' reports in DIR/run-K/. Uncommitted changes are
# not in the clones: commit first. Exits 1 when any run failed. Takes about N x 8-12 minutes on
# 2 cores.
set -uo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
runs="${1:-6}"
out="${2:-$top/target/flake-hunt}"
case "$runs" in '' | *[!0-9]*) echo "usage: $0 [RUNS] [DIR]" >&2; exit 2 ;; esac
load_pattern="${FLAKE_HUNT_LOAD:-alternate}"
case "$load_pattern" in alternate | every | none) ;; *) echo "FLAKE_HUNT_LOAD: alternate, every or none" >&2; exit 2 ;; esac
[ -n "$(git -C "$top" status --porcelain)" ] && echo "note: uncommitted changes are not tested; each clone has the HEAD of its start"
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/flake-hunt.XXXXXX")
load_pid=""
stop_load() {
  if [ -n "$load_pid" ]; then
    kill "$load_pid" 2>/dev/null
    wait "$load_pid" 2>/dev/null
    load_pid=""
  fi
}
trap 'stop_load; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

results="$out/results.md"
{
  echo "| run | commit | load | minutes | exit | tests | failed tests |"
  echo "| ---: | --- | --- | ---: | ---: | ---: | --- |"
} > "$results"

any_failed=0
for k in $(seq 1 "$runs"); do
  loaded=no
  if [ "$load_pattern" = every ] || { [ "$load_pattern" = alternate ] && [ $((k % 2)) -eq 0 ]; }; then
    loaded="one core busy"
  fi
  clone="$work/run-$k"
  keep="$out/run-$k"
  rm -rf "$keep"
  mkdir -p "$keep"
  git clone --quiet --no-hardlinks "$top" "$clone"
  commit=$(git -C "$clone" rev-parse --short HEAD)   # HEAD may move between runs: each run says which it tested
  if [ "$loaded" != no ]; then
    ( while :; do :; done ) &
    load_pid=$!
  fi
  start=$(date +%s)
  echo "run $k of $runs ($commit, load: $loaded) started $(date -u +%H:%M:%S) UTC"
  (cd "$clone" && CI=true bash .ci/run < /dev/null) > "$keep/console.log" 2>&1
  code=$?
  stop_load
  minutes=$(awk -v s="$(( $(date +%s) - start ))" 'BEGIN { printf "%.1f", s / 60 }')
  # A failed test is a <testcase> with a <failure> or <error> child in a Surefire/Failsafe report.
  failed=$(python3 - "$clone" <<'PY'
import glob, sys, xml.etree.ElementTree as ET
names, total = [], 0
for f in sorted(glob.glob(sys.argv[1] + '/**/target/*-reports/TEST-*.xml', recursive=True)):
    try:
        root = ET.parse(f).getroot()
    except ET.ParseError:
        names.append('unreadable report ' + f.split('/target/')[0].rsplit('/', 1)[-1]); continue
    for case in root.iter('testcase'):
        total += 1
        if case.find('failure') is not None or case.find('error') is not None:
            names.append(case.get('classname', '?').rsplit('.', 1)[-1] + '.' + case.get('name', '?'))
print(total)
print(', '.join(names))
PY
)
  tests=$(echo "$failed" | sed -n 1p)
  names=$(echo "$failed" | sed -n 2p)
  if [ "$code" -ne 0 ]; then
    any_failed=1
    [ -z "$names" ] && names="(no test failed: see console.log)"
    find "$clone" -path '*/target/*-reports/*' \( -name '*.txt' -o -name '*-output.txt' \) -newer "$clone/.ci/run" \
      -exec grep -l -E 'FAILURE|ERROR' {} + 2>/dev/null | while read -r f; do cp "$f" "$keep/"; done
  fi
  echo "| $k | $commit | $loaded | $minutes | $code | $tests | ${names:--} |" >> "$results"
  echo "run $k: exit $code in $minutes min, $tests tests${names:+, failed: $names}"
  rm -rf "$clone"
done
echo
cat "$results"
exit "$any_failed"
