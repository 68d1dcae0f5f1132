#!/usr/bin/env bash
# Installs, once, the outside programs some tests run, so that no test installs anything:
#   python    the virtual environment of scripts/python-env.sh (pinned packages from PyPI), and
#             scripts/python-package-env.sh's fresh venv with the switchboard package pip-installed
#   grpcurl   grpcurl, built with `go install` into <repo>/target/tools/grpcurl-VERSION/
#   chromium  Debian's chromium, with apt-get (as root)
# `mvn verify` runs this script once, at generate-test-resources of the test-prerequisites module; it can be
# run by hand too (-Dswitchboard.prerequisites.skip=true, or -DskipTests, keeps Maven from running
# it). Idempotent: what is installed already is left alone, so a second run does
# nothing but check (under a second).
#
# SWITCHBOARD_TESTS_OFF=chromium,grpcurl,python,multihost (any of them, comma-separated) turns
# those tests off: this script then does not install their program, and the tests are reported
# as skipped with that reason. Otherwise a test whose program is missing fails saying what is
# missing. multihost needs nothing installed (root and `ip`) and is listed only for the tests.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
say() { echo "test-prerequisites: $*" >&2; }
die() { say "ERROR: $*"; exit 1; }
off() { [[ ",${SWITCHBOARD_TESTS_OFF:-}," == *",$1,"* ]]; }

if off python; then
    say "python: off (SWITCHBOARD_TESTS_OFF)"
else
    bash "$repo/scripts/python-env.sh" >/dev/null
    bash "$repo/scripts/python-package-env.sh" >/dev/null
fi

if off grpcurl; then
    say "grpcurl: off (SWITCHBOARD_TESTS_OFF)"
else
    version="$(sed -n 's/.*String VERSION = "\(v[^"]*\)".*/\1/p' \
        "$repo/protocols/testing/src/main/java/io/switchboard/testing/Grpcurl.java")"
    [ -n "$version" ] || die "no grpcurl VERSION in Grpcurl.java"
    dir="$repo/target/tools/grpcurl-$version"
    if [ ! -x "$dir/grpcurl" ]; then
        go="$(command -v go || true)"
        for g in "${GOROOT:-/nonexistent}/bin/go" /usr/local/go/bin/go; do
            if [ -z "$go" ] && [ -x "$g" ]; then go="$g"; fi
        done
        [ -n "$go" ] || die "grpcurl is missing and Go is not installed (no go on PATH, in \$GOROOT/bin or /usr/local/go/bin)"
        mkdir -p "$dir"
        staging="$(mktemp -d "$dir/install-XXXXXX")"
        say "go install github.com/fullstorydev/grpcurl/cmd/grpcurl@$version ..."
        GOBIN="$staging" GOFLAGS=-buildvcs=false "$go" install "github.com/fullstorydev/grpcurl/cmd/grpcurl@$version" \
            || die "go install of grpcurl $version failed"
        mv "$staging/grpcurl" "$dir/grpcurl"   # appears whole, by a rename
        rm -rf "$staging"
    fi
fi

if off chromium; then
    say "chromium: off (SWITCHBOARD_TESTS_OFF)"
elif [ ! -x /usr/bin/chromium ]; then
    [ "$(id -u)" = 0 ] || die "chromium is missing and this is not root: apt-get install -y chromium as root, or SWITCHBOARD_TESTS_OFF=chromium"
    say "apt-get install -y chromium ..."
    apt-get install -y chromium >&2 || { apt-get update >&2 && apt-get install -y chromium >&2; } \
        || die "apt-get install -y chromium failed"
    [ -x /usr/bin/chromium ] || die "apt-get installed no /usr/bin/chromium"
fi
