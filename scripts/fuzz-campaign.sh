#!/usr/bin/env bash
# A fuzzing campaign over every Jazzer target, one JVM per target, each for SECONDS (default 90),
# then the corpus each one grew is kept: copied into the target's inputs directory, where every
# `mvn verify` replays it (regression mode, with the round-trip check). A finding stops that target
# and is written as crash-<sha1> into the same directory; the script goes on and exits 1 at the end.
#
#   scripts/fuzz-campaign.sh                 # all targets, 90 s each (about 15 minutes on 2 cores)
#   scripts/fuzz-campaign.sh 60 ProtoDecoderFuzzTest#decode   # one target, 60 s
#
# Jazzer's working corpus is <module>/.cifuzz-corpus (ignored by git); a kept input is named
# corpus-<sha1>, so a second campaign starts from the first one's corpus and adds only new inputs.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
seconds="${1:-90}"
only="${2:-}"

targets=(
  "idl/model io.switchboard.idl.SchemaReaderFuzzTest read"
  "protocols/testing io.switchboard.testing.fuzz.XmlMessagesFuzzTest fromXml"
  "protocols/testing io.switchboard.testing.fuzz.DynamicXmlFuzzTest read"
  "protocols/grpc io.switchboard.protocol.grpc.ProtoDecoderFuzzTest decode"
  "protocols/grpc io.switchboard.protocol.grpc.ProtoDecoderFuzzTest decodeDynamic"
  "protocols/grpc io.switchboard.protocol.grpc.PartFramingFuzzTest framing"
  "registry/store io.switchboard.registry.store.StoreFormatFuzzTest decode"
  "registry/server-test io.switchboard.registry.server.RegistryEntryFuzzTest bind"
)

failed=0
for t in "${targets[@]}"; do
  read -r module class method <<<"$t"
  simple="${class##*.}"
  [ -n "$only" ] && [ "$only" != "$simple#$method" ] && [ "$only" != "$simple" ] && continue
  inputs="$module/src/test/resources/$(dirname "${class//.//}")/${simple}Inputs/$method"
  corpus="$module/.cifuzz-corpus/$class/$method"
  mkdir -p "$inputs" "$corpus"
  # seed the working corpus with what earlier campaigns kept, so this one goes further
  cp -n "$inputs"/corpus-* "$corpus"/ 2>/dev/null
  before=$(ls "$corpus" | wc -l)
  echo "== $simple#$method: $seconds s (corpus $before inputs)"
  log="$(mktemp)"
  if ! JAZZER_FUZZ=1 JAZZER_INSTRUMENT='io.switchboard.**' JAZZER_MAX_DURATION="${seconds}s" \
      nice mvn -B -ntp test -pl "$module" -am -Dtest="$simple#$method" -Dsurefire.failIfNoSpecifiedTests=false \
      >"$log" 2>&1; then
    echo "   FINDING or failure: see $log; new crash inputs:"
    ls "$inputs" | grep '^crash-' || true
    failed=1
  fi
  kept=0
  for f in "$corpus"/*; do
    [ -f "$f" ] || continue
    name="corpus-$(basename "$f")"
    if [ ! -e "$inputs/$name" ]; then
      cp "$f" "$inputs/$name"
      kept=$((kept + 1))
    fi
  done
  grep -aoE "#[0-9]+[[:space:]]+(DONE|pulse).*" "$log" | tail -1 | sed 's/^/   /'
  echo "   kept $kept new inputs in $inputs ($(ls "$inputs" | wc -l) in all)"
done
exit "$failed"
