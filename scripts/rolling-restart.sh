#!/usr/bin/env bash
# A rolling restart under load, every piece a process of its own, as an operator runs one: a
# registry, three replicas of a component (./switchboard serve, each writing a call log), and
# ./switchboard load through the registry. Once load's calls reach a replica, it gets SIGTERM (it
# drains: unbinds, answers for the quiet period, refuses new calls as draining, waits for those
# under way), is started again, and the next one follows once load's calls reach the new one.
# Then load gets SIGTERM and prints its summary (its JSON last), and the replicas are stopped.
#
#   scripts/rolling-restart.sh                                   # echo: Echo echoDoubles values="1.5 -0.0 NaN INF"
#   scripts/rolling-restart.sh echo Echo echoDoubles "values=1 2 3"
#   CONCURRENCY=32 HOLD=10 scripts/rolling-restart.sh            # 32 callers; 10 s of load before each restart
#
# Arguments: COMPONENT (as serve takes it) NAME OPERATION [FIELD=VALUE ...] (as load takes them).
# Environment: CONCURRENCY (16), DRAIN_QUIET_MS (1000, serve's --drain-quiet), HOLD (seconds of
# load before each restart and after the last, beyond the first call a replica ran: 0),
# SWITCHBOARD_JAVA_OPTS (as for ./switchboard). The processes' output and call logs stay in the
# directory printed first. Exits 0 when no call failed, no call id ran twice and every replica
# drained without cutting a call; 1 otherwise.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
sb="$root/switchboard"
component="${1:-echo}"
if [ $# -ge 3 ]; then
  shift
  call=("$@")
else
  call=(Echo echoDoubles "values=1.5 -0.0 NaN INF")
fi
concurrency="${CONCURRENCY:-16}"
quiet="${DRAIN_QUIET_MS:-1000}"
hold="${HOLD:-0}"
dir="$(mktemp -d -t rolling-restart-XXXXXX)"
echo "rolling-restart: output in $dir" >&2

"$sb" --version >/dev/null 2>&1 || "$sb" --help >/dev/null   # builds once, before anything is timed

pids=()
stop_all() {
  for p in "${pids[@]}"; do
    kill -TERM "$p" 2>/dev/null || true
  done
  wait 2>/dev/null || true
}
trap stop_all EXIT

# waits until FILE has a line starting with PREFIX (at most 120 s); prints the first such line
await_line() {
  local file="$1" prefix="$2" what="$3"
  for _ in $(seq 1200); do
    if [ -f "$file" ] && grep -q "^$prefix" "$file"; then
      grep -m1 "^$prefix" "$file"
      return 0
    fi
    sleep 0.1
  done
  echo "rolling-restart: $what printed no '$prefix' line in 120 s (see $dir)" >&2
  exit 1
}

"$sb" registry --port 0 --store memory >"$dir/registry.out" 2>"$dir/registry.err" &
pids+=($!)
url="$(await_line "$dir/registry.out" registry "the registry" | awk '{print $2}')"

replica_pid=()
start_replica() {   # INDEX GENERATION
  local log="$dir/replica-$1-$2"
  "$sb" serve "$component" --registry "$url" --drain-quiet "$quiet" --call-log "$log.calls" >"$log.out" 2>"$log.err" &
  replica_pid[$1]=$!
  pids+=($!)
}
for i in 0 1 2; do
  start_replica "$i" 0
done
for i in 0 1 2; do
  await_line "$dir/replica-$i-0.out" serving "replica $i" >/dev/null
done
echo "rolling-restart: registry $url, three replicas of $component serving; load: ${call[*]} from $concurrency callers" >&2

"$sb" load "${call[@]}" --registry "$url" --concurrency "$concurrency" --duration 0 --json \
    >"$dir/load.out" 2>"$dir/load.err" &
load_pid=$!
pids+=($load_pid)

ok=0
for i in 0 1 2; do
  await_line "$dir/replica-$i-0.calls" ran "replica $i" >/dev/null   # load's calls reach it
  sleep "$hold"
  kill -TERM "${replica_pid[$i]}"
  wait "${replica_pid[$i]}" || true   # 143: ended by the signal, after its shutdown hook
  stopped="$(await_line "$dir/replica-$i-0.out" stopped "replica $i")"
  echo "rolling-restart: replica $i $stopped" >&2
  case "$stopped" in *", 0 cut;"*) ;; *) ok=1 ;; esac
  start_replica "$i" 1
  await_line "$dir/replica-$i-1.out" serving "replica $i, started again" >/dev/null
  await_line "$dir/replica-$i-1.calls" ran "replica $i, started again" >/dev/null
  echo "rolling-restart: replica $i started again and taking calls" >&2
done
sleep "$hold"

kill -TERM "$load_pid"
wait "$load_pid" || true   # 143: stopped by the signal; the summary is its output
cat "$dir/load.out"
for i in 0 1 2; do
  kill -TERM "${replica_pid[$i]}"
  wait "${replica_pid[$i]}" || true
done

summary="$(tail -n 1 "$dir/load.out")"
calls="$(sed -E 's/^\{"calls":([0-9]+),.*/\1/' <<<"$summary")"
failed="$(sed -E 's/.*"failed":([0-9]+),.*/\1/' <<<"$summary")"
runs="$(cat "$dir"/replica-*.calls | wc -l)"
twice="$(awk '{print $NF}' "$dir"/replica-*.calls | sort | uniq -d | wc -l)"
echo "rolling-restart: $calls calls, $failed failed; the replicas ran $runs calls, $twice call id(s) more than once" >&2
[ "$failed" = 0 ] && [ "$twice" = 0 ] && [ "$ok" = 0 ]
