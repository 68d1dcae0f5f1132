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
#
# --background (what `mvn verify` runs): makes the venv that early modules' tests use now, then
# installs the rest (the package's venv, grpcurl, Chromium: only the command line's tests run
# them) in the background and returns, so that no module waits for a download or a Go build it
# does not need. The background install holds target/test-prerequisites.lock (flock) while it
# runs, writes its output to target/test-prerequisites.log and its exit status to
# target/test-prerequisites.status; a test whose program is missing waits for the lock and looks
# again (io.switchboard.testing.Prerequisites).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
say() { echo "test-prerequisites: $*" >&2; }
die() { say "ERROR: $*"; exit 1; }
off() { [[ ",${SWITCHBOARD_TESTS_OFF:-}," == *",$1,"* ]]; }

if [ "${1:-}" = --background ]; then
    off python || bash "$repo/scripts/python-env.sh" >/dev/null
    if command -v flock >/dev/null && command -v setsid >/dev/null; then
        mkdir -p "$repo/target"
        lock="$repo/target/test-prerequisites.lock"
        exec 9>"$lock"
        flock 9   # an install still running from an earlier build ends first
        rm -f "$repo/target/test-prerequisites.status"
        # the child inherits fd 9, and with it the lock, until it ends; its output goes to the log,
        # so that Maven, reading this script's output to its end, does not wait for it
        setsid bash "$0" --rest-holding-lock </dev/null >"$repo/target/test-prerequisites.log" 2>&1 &
        say "the rest installs in the background (log: target/test-prerequisites.log)"
        exit 0
    fi
    say "no flock or setsid here: installing everything now"
elif [ "${1:-}" = --rest-holding-lock ]; then
    # the steps below without fd 9, so that nothing they leave running (a daemon an apt package
    # starts) holds the lock after this script
    status=0
    bash "$0" --rest 9>&- || status=$?
    echo "$status" > "$repo/target/test-prerequisites.status"
    exit "$status"
fi

if off python; then
    say "python: off (SWITCHBOARD_TESTS_OFF)"
else
    [ "${1:-}" = --rest ] || bash "$repo/scripts/python-env.sh" >/dev/null
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
