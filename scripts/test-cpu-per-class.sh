#!/usr/bin/env bash
# The test suite's CPU per test class. Runs the README's test command (mvn -B -ntp verify) with a
# JUnit listener (scripts/test-cpu/CpuPerTestClass.java) on every test JVM's class path, which notes
# each class's CPU: its test JVM's own and that of the child processes it waited for meanwhile
# (the JVMs, Python and Maven builds the tests start). Then prints the classes by CPU, as a
# Markdown table, with the total beside the whole run's CPU (Maven's own compiling and packaging
# is the difference).
#
#   scripts/test-cpu-per-class.sh            # the 15 classes with the most CPU
#   scripts/test-cpu-per-class.sh 40 DIR     # 40 of them; the log and Maven's output in DIR
#
# Run it on a fresh clone with nothing else running, as the CI runs (reliability.md, "A third
# look: CPU per test class"). Linux only (/proc). Takes as long as the suite.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
count="${1:-15}"
out="${2:-$top/target/test-cpu}"
case "$count" in '' | *[!0-9]*) echo "usage: $0 [CLASSES] [DIR]" >&2; exit 2 ;; esac
mkdir -p "$out/classes/META-INF/services"
out=$(cd "$out" && pwd)

# the listener, compiled against the JUnit Platform of the build (from the local Maven repository)
repo="${MAVEN_REPOSITORY:-$HOME/.m2/repository}"
jupiter=$(sed -n 's:.*<junit.version>\(.*\)</junit.version>.*:\1:p' "$top/pom.xml" | head -1)
platform="1.${jupiter#5.}"   # JUnit 5.x.y runs on the Platform 1.x.y
classpath=""
for artifact in launcher engine commons; do
  jar="$repo/org/junit/platform/junit-platform-$artifact/$platform/junit-platform-$artifact-$platform.jar"
  [ -f "$jar" ] || { echo "test-cpu: $jar missing; run the build once first (mvn -B -ntp verify)" >&2; exit 1; }
  classpath="$classpath:$jar"
done
for jar in "$repo"/org/opentest4j/opentest4j/*/opentest4j-*.jar; do classpath="$classpath:$jar"; done
javac -nowarn -d "$out/classes" -cp "${classpath#:}" "$top/scripts/test-cpu/CpuPerTestClass.java" 2>/dev/null
echo CpuPerTestClass > "$out/classes/META-INF/services/org.junit.platform.launcher.TestExecutionListener"
(cd "$out/classes" && jar cf "$out/cpu-per-test-class.jar" .)

log="$out/classes.txt"
: > "$log"
echo "test-cpu: mvn -B -ntp verify, Maven's output in $out/maven.log" >&2
status=0
TIMEFORMAT='%R %U %S'
{ time (cd "$top" && SWITCHBOARD_TEST_CPU_LOG="$log" \
    mvn -B -ntp verify -Dmaven.test.additionalClasspath="$out/cpu-per-test-class.jar" > "$out/maven.log" 2>&1) \
    || status=$?; } 2> "$out/time.txt"

read -r wall user sys < "$out/time.txt"
awk -v top="$count" -v wall="$wall" -v cpu="$(echo "$user + $sys" | bc)" -v status="$status" '
  { own[$1] += $2; children[$1] += $3; secs[$1] += $4; total += $2 + $3; all_children += $3 }
  END {
    printf "Test classes: %.0f s of CPU (%.0f s in child processes); the whole run: %.0f s of CPU in %.0f s%s.\n\n",
        total, all_children, cpu, wall, status == 0 ? "" : " (the build FAILED)"
    print "| class | CPU s (own + children) | wall s |"
    print "| --- | ---: | ---: |"
    n = 0
    for (c in own) order[++n] = c
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
      if (own[order[j]] + children[order[j]] > own[order[i]] + children[order[i]]) { t = order[i]; order[i] = order[j]; order[j] = t }
    for (i = 1; i <= n && i <= top; i++) {
      c = order[i]; short = c; sub(/.*\./, "", short)
      printf "| `%s` | %.0f (%.0f + %.0f) | %.0f |\n", short, own[c] + children[c], own[c], children[c], secs[c]
    }
  }' "$log"
exit "$status"
