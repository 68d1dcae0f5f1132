#!/usr/bin/env bash
# Makes a fresh virtual environment with the switchboard Python package installed as a user does,
# `pip install ./metastub/python[numpy]` (its dependencies from PyPI), and prints its python's path.
# The package's suite runs its example there (metastub/python/tests/test_install.py).
#
#   scripts/python-package-env.sh [VENV_DIR]     default VENV_DIR: <repo>/target/python-package-venv
#
# Idempotent: a venv whose stamp matches the package's files and the base interpreter is reused at
# once; otherwise it is made again from nothing, so what is installed is always the current sources
# in a fresh venv. The install reads a copy of the package, so the build's leftovers (build/,
# *.egg-info) stay out of the checkout. PYTHON_ENV_CHECK=1 builds nothing and fails unless the venv
# is ready. Progress goes to stderr; stdout is only the python path.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
package="$repo/metastub/python"
venv="${1:-$repo/target/python-package-venv}"
base_python="${PYTHON:-python3}"

say() { echo "python-package-env: $*" >&2; }
die() { say "ERROR: $*"; exit 1; }

command -v "$base_python" >/dev/null 2>&1 || die "$base_python not found on PATH (set PYTHON=/path/to/python3)"
mkdir -p "$(dirname "$venv")"
venv="$(cd "$(dirname "$venv")" && pwd)/$(basename "$venv")"
base_id="$("$base_python" -c 'import sys; print(sys.version.split()[0], sys.base_prefix)')" || die "$base_python does not run"
# the stamp names what the venv was made from: the package's files (not its tests) and the interpreter
stamp_want="$( { (cd "$package" && find pyproject.toml README.md src -type f ! -path '*/__pycache__/*' \
    ! -path '*.egg-info/*' -print0 | sort -z | xargs -0 sha256sum); echo "$base_id"; } | sha256sum | cut -d' ' -f1)"
stamp_file="$venv/.switchboard-stamp"
ready() { [ -x "$venv/bin/python" ] && [ -f "$stamp_file" ] && [ "$(cat "$stamp_file")" = "$stamp_want" ]; }

if [ "${PYTHON_ENV_CHECK:-}" = 1 ]; then
    ready || die "$venv is missing or stale: scripts/test-prerequisites.sh (or this script) makes it"
    echo "$venv/bin/python"
    exit 0
fi

if command -v flock >/dev/null 2>&1; then
    exec 9>"$venv.lock"
    flock -w 600 9 || die "timed out waiting for another build of $venv"
fi

if ! ready; then
    say "pip install ./metastub/python[numpy] into a fresh $venv ..."
    rm -rf "$venv"
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' EXIT
    mkdir "$work/switchboard"
    cp -r "$package/pyproject.toml" "$package/README.md" "$package/src" "$work/switchboard/"
    find "$work/switchboard" \( -name '__pycache__' -o -name '*.egg-info' \) -prune -exec rm -rf {} +
    if ! "$base_python" -m venv "$venv" >"$work/log" 2>&1 \
            || ! "$venv/bin/python" -m pip install --disable-pip-version-check --no-input --quiet --no-compile \
                "$work/switchboard[numpy]" >"$work/log" 2>&1 \
            || ! (cd "$work" && "$venv/bin/python" -c 'import switchboard, numpy') >"$work/log" 2>&1; then
        cat "$work/log" >&2
        rm -rf "$venv"
        die "could not install the package into a fresh venv"
    fi
    echo "$stamp_want" >"$stamp_file"
    say "ready"
fi

echo "$venv/bin/python"
