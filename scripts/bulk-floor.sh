#!/usr/bin/env bash
# The floor under a bulk transfer on this machine: how fast hand-written Java moves a double[]
# each way over loopback TCP, as the bench's raw socket does it (streams, a byte[] block) and with
# one copy fewer on each side (NIO and direct buffers, or a Netty server reading into the array).
# Two JVMs, the ways interleaved call by call (scripts/bulk-floor/BulkFloor.java); prints a
# Markdown table. docs/benchmarks/bulk.md, "The floor of a hand-written path", reads it.
#
#   scripts/bulk-floor.sh                  # double[10^7], 40 rounds
#   scripts/bulk-floor.sh 1000000 100      # double[10^6], 100 rounds
#
# Needs Netty in the local Maven repository (any build of the project fetches it). Linux (epoll).
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
doubles="${1:-10000000}"
rounds="${2:-40}"
case "$doubles$rounds" in *[!0-9]*) echo "usage: $0 [DOUBLES] [ROUNDS]" >&2; exit 2 ;; esac
repo="${MAVEN_REPOSITORY:-$HOME/.m2/repository}"
netty=$(sed -n 's:.*<netty.version>\(.*\)</netty.version>.*:\1:p' "$top/pom.xml" | head -1)
classpath=""
for artifact in buffer common transport resolver codec handler transport-classes-epoll transport-native-unix-common; do
  jar="$repo/io/netty/netty-$artifact/$netty/netty-$artifact-$netty.jar"
  [ -f "$jar" ] || { echo "bulk-floor: $jar missing; build the project once first" >&2; exit 1; }
  classpath="$classpath:$jar"
done
classpath="$classpath:$repo/io/netty/netty-transport-native-epoll/$netty/netty-transport-native-epoll-$netty-linux-$(uname -m).jar"
work=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
javac -nowarn -d "$work" -cp "${classpath#:}" "$top/scripts/bulk-floor/BulkFloor.java"
port=$((20000 + RANDOM % 20000))
heap="-Xms2g -Xmx2g"
java $heap -cp "$work$classpath" BulkFloor serve "$port" > "$work/server.log" 2>&1 &
server=$!
for _ in $(seq 100); do grep -q serving "$work/server.log" 2>/dev/null && break; sleep 0.1; done
grep -q serving "$work/server.log" || { cat "$work/server.log" >&2; exit 1; }
java $heap -cp "$work$classpath" BulkFloor call "$port" "$doubles" "$rounds"
