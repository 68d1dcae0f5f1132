#!/usr/bin/env bash
# Measures each library shortcut of the protocols (docs/architecture.md, "Library internals we rely
# on") against the same build with its switch off: A (on) and B (off) alternate A B B A in every
# round, so a drift of the machine's load over a round falls on both alike. Each run is one
# `./switchboard bench` of the cells the shortcut is for; the table gives, per shortcut and cell,
# the median over the runs of each arm of their medians and p10s, and the spread (largest minus
# smallest run median) of each arm. A gain smaller than the spreads is no gain.
#
#   scripts/bench-tricks.sh [--rounds N] [--reps N] [--warmup N] [--budget S] [--only NAME,...] [--sizes N,...] [--out DIR]
#
# Defaults: 3 rounds (12 runs per shortcut), 2000 timed calls after 2000 warm-up calls per small
# cell, 60 s budget per cell; --out results/bench-tricks-<UTC time>. Shortcuts: soap.connection,
# soap.awaitOnThread, soap.directAxis2. The JVM options of SWITCHBOARD_JAVA_OPTS are kept (default
# "-Xms1g -Xmx1g -XX:+UseG1GC") and the switch added; the bench passes it on to its server JVM. --sizes replaces every shortcut's sizes. A smoke run:
# --rounds 1 --reps 20 --warmup 20 --budget 5 --sizes 10.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=3 reps=2000 warmup=2000 budget=60 only="" sizes_all="" out=""
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) rounds=$2; shift 2 ;;
        --reps) reps=$2; shift 2 ;;
        --warmup) warmup=$2; shift 2 ;;
        --budget) budget=$2; shift 2 ;;
        --only) only=$2; shift 2 ;;
        --sizes) sizes_all=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        *) echo "bench-tricks: unknown option $1" >&2; exit 2 ;;
    esac
done
out=${out:-results/bench-tricks-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
base_opts=${SWITCHBOARD_JAVA_OPTS:-"-Xms1g -Xmx1g -XX:+UseG1GC"}

# shortcut | protocol | workloads | sizes (the cells it was measured on)
shortcuts="soap.connection|soap|empty,doubles|10
soap.awaitOnThread|soap|empty,doubles|10
soap.directAxis2|soap|empty,doubles|10"

runs="$out/runs.csv"
echo "shortcut,arm,round,workload,size,median_us,p10_us" > "$runs"
while IFS='|' read -r name protocol workloads sizes; do
    if [ -n "$only" ] && [[ ",$only," != *",$name,"* ]]; then
        continue
    fi
    sizes=${sizes_all:-$sizes}
    for ((r = 1; r <= rounds; r++)); do
        for arm in on off off on; do
            value=$([ "$arm" = on ] && echo true || echo false)
            dir="$out/$name/round-$r-$arm-$(date +%s%N)"
            mkdir -p "$dir"
            echo "bench-tricks: $name $arm (round $r of $rounds)"
            SWITCHBOARD_JAVA_OPTS="$base_opts -Dswitchboard.$name=$value" ./switchboard bench \
                --workloads "$workloads" --sizes "$sizes" --protocols "$protocol" --reps "$reps" \
                --warmup "$warmup" --budget "$budget" --heap 1g --out "$dir" > "$dir/bench.log" 2>&1 \
                || { echo "bench-tricks: the run failed, see $dir/bench.log" >&2; exit 1; }
            # bench.csv: workload,size,protocol,median_us,p10_us,...
            awk -F, -v n="$name" -v a="$arm" -v r="$r" -v p="$protocol" \
                'NR > 1 && $3 == p { print n "," a "," r "," $1 "," $2 "," $4 "," $5 }' "$dir/bench.csv" >> "$runs"
        done
    done
done <<< "$shortcuts"

# the table: per shortcut, cell and arm, the median of the run medians and p10s, and their spread
python3 - "$runs" "$out/table.md" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
cells = {}
for r in rows:
    cells.setdefault((r["shortcut"], r["workload"], int(r["size"])), {"on": [], "off": []})[r["arm"]].append(
        (float(r["median_us"]), float(r["p10_us"])))
lines = ["| shortcut | cell | runs on/off | on: median / p10 µs | off: median / p10 µs | spread on / off µs | off ÷ on |",
         "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
for (name, workload, size), arms in sorted(cells.items()):
    def summary(samples):
        if not samples:
            return None
        medians = [m for m, _ in samples]
        return statistics.median(medians), statistics.median(p for _, p in samples), max(medians) - min(medians)
    on, off = summary(arms["on"]), summary(arms["off"])
    cell = workload if workload == "empty" else f"{workload} {size:,}"
    if on is None or off is None:
        lines.append(f"| {name} | {cell} | {len(arms['on'])}/{len(arms['off'])} | - | - | - | - |")
        continue
    lines.append(f"| {name} | {cell} | {len(arms['on'])}/{len(arms['off'])} | {on[0]:,.1f} / {on[1]:,.1f} "
                 f"| {off[0]:,.1f} / {off[1]:,.1f} | {on[2]:,.1f} / {off[2]:,.1f} | {off[0] / on[0]:.3f} |")
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
EOF
echo "bench-tricks: runs in $runs, table in $out/table.md"
