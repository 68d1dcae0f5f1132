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
# PYTHON_ENV_CHECK=1 builds nothing and fails unless the venv is ready (scripts/lib/venv.sh).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv_name=python-env
source "$repo/scripts/lib/venv.sh"
requirements="$repo/scripts/python-requirements.txt"
[ -f "$requirements" ] || die "missing $requirements"
venv_begin "${1:-$repo/target/python-venv}"

build() {
    say "creating $venv (Python $base_id) ..."
    venv_step "'$base_python -m venv' failed (on Debian: apt-get install python3-venv)" "$base_python" -m venv "$venv"
    venv_step "pip could not install $requirements" "$venv/bin/python" -m pip install \
        --disable-pip-version-check --no-input --quiet --requirement "$requirements"
    # prove that what the tests import is there before calling the venv ready
    venv_step "installed packages do not import" "$venv/bin/python" -c 'import grpc, grpc_tools.protoc, google.protobuf, zeep'
}

# the stamp names what the venv was built from: the requirements' content and the base interpreter
venv_ensure "$( { cat "$requirements"; echo "$base_id"; } | sha256sum | cut -d' ' -f1)" build
