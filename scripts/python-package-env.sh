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
# is ready (scripts/lib/venv.sh). Progress goes to stderr; stdout is only the python path.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv_name=python-package-env
source "$repo/scripts/lib/venv.sh"
package="$repo/metastub/python"
venv_begin "${1:-$repo/target/python-package-venv}"

build() {
    say "pip install ./metastub/python[numpy] into a fresh $venv ..."
    local copy="$venv_work/switchboard"
    mkdir "$copy"
    cp -r "$package/pyproject.toml" "$package/README.md" "$package/src" "$copy/"
    find "$copy" \( -name '__pycache__' -o -name '*.egg-info' \) -prune -exec rm -rf {} +
    venv_step "'$base_python -m venv' failed (on Debian: apt-get install python3-venv)" "$base_python" -m venv "$venv"
    venv_step "could not install the package into a fresh venv" "$venv/bin/python" -m pip install \
        --disable-pip-version-check --no-input --quiet --no-compile "$copy[numpy]"
    # imported from outside the copy, so it is the installed package that imports
    venv_step "the installed package does not import" \
        env -C "$venv_work" "$venv/bin/python" -c 'import switchboard, numpy'
}

# the stamp names what the venv was made from: the package's files (not its tests) and the interpreter
venv_ensure "$( { (cd "$package" && find pyproject.toml README.md src -type f ! -path '*/__pycache__/*' \
    ! -path '*.egg-info/*' -print0 | sort -z | xargs -0 sha256sum); echo "$base_id"; } | sha256sum | cut -d' ' -f1)" build
