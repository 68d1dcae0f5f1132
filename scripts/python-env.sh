#!/usr/bin/env bash
# Creates (or reuses) the Python virtual environment that the project's cross-language tests use,
# with the pinned packages of scripts/python-requirements.txt, and prints its python's path.
#
#   scripts/python-env.sh [VENV_DIR]     default VENV_DIR: <repo>/target/python-venv
#
# Idempotent: a venv whose stamp matches the requirements file and the base interpreter is reused
# at once (well under a second); otherwise it is rebuilt from scratch. Needs python3 (with the
# venv module) and PyPI; fails with a non-zero exit and pip's output when it cannot install.
# Progress goes to stderr; stdout is only the python path. PYTHON=... picks the base interpreter;
# PYTHON_ENV_CHECK=1 builds nothing and fails unless the venv is ready.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
requirements="$repo/scripts/python-requirements.txt"
venv="${1:-$repo/target/python-venv}"
base_python="${PYTHON:-python3}"

say() { echo "python-env: $*" >&2; }
die() { say "ERROR: $*"; exit 1; }

command -v "$base_python" >/dev/null 2>&1 || die "$base_python not found on PATH (set PYTHON=/path/to/python3)"
[ -f "$requirements" ] || die "missing $requirements"
mkdir -p "$(dirname "$venv")"
venv="$(cd "$(dirname "$venv")" && pwd)/$(basename "$venv")"

# The stamp names what the venv was built from: the requirements' content and the base interpreter.
base_id="$("$base_python" -c 'import sys; print(sys.version.split()[0], sys.base_prefix)')" \
    || die "$base_python does not run"
stamp_want="$( { cat "$requirements"; echo "$base_id"; } | sha256sum | cut -d' ' -f1)"
stamp_file="$venv/.switchboard-stamp"

ready() {
    [ -x "$venv/bin/python" ] && [ -f "$stamp_file" ] && [ "$(cat "$stamp_file")" = "$stamp_want" ]
}

# PYTHON_ENV_CHECK=1: only say whether the venv is ready (the tests ask this way; they build nothing).
if [ "${PYTHON_ENV_CHECK:-}" = 1 ]; then
    ready || die "$venv is missing or stale: scripts/test-prerequisites.sh (or this script) builds it"
    echo "$venv/bin/python"
    exit 0
fi

# Serialise concurrent builds of the same venv (two test JVMs, two shells).
if command -v flock >/dev/null 2>&1; then
    exec 9>"$venv.lock"
    flock -w 600 9 || die "timed out waiting for another build of $venv"
fi

if ! ready; then
    say "creating $venv (Python $base_id) ..."
    rm -rf "$venv"
    log="$(mktemp)"
    trap 'rm -f "$log"' EXIT
    if ! "$base_python" -m venv "$venv" >"$log" 2>&1; then
        cat "$log" >&2
        rm -rf "$venv"
        die "'$base_python -m venv' failed (on Debian: apt-get install python3-venv)"
    fi
    if ! "$venv/bin/python" -m pip install --disable-pip-version-check --no-input --quiet \
            --requirement "$requirements" >"$log" 2>&1; then
        cat "$log" >&2
        rm -rf "$venv"
        die "pip could not install $requirements"
    fi
    # Prove that what the tests import is there before calling the venv ready.
    if ! "$venv/bin/python" -c 'import grpc, grpc_tools.protoc, google.protobuf, zeep' >"$log" 2>&1; then
        cat "$log" >&2
        rm -rf "$venv"
        die "installed packages do not import"
    fi
    echo "$stamp_want" >"$stamp_file"
    say "ready"
fi

echo "$venv/bin/python"
