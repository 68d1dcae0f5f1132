# Steps shared by the scripts that make the project's Python virtual environments
# (scripts/python-env.sh, scripts/python-package-env.sh). Sourced, not run. A script sets
# venv_name (for its messages), calls venv_begin DIR, computes its stamp from what the venv is
# made of plus $base_id, and calls venv_ensure STAMP BUILD_FUNCTION.
#
# A venv whose stamp file matches is reused at once; otherwise BUILD_FUNCTION makes it from
# nothing. PYTHON=... picks the base interpreter; PYTHON_ENV_CHECK=1 builds nothing and fails
# unless the venv is ready. Progress goes to stderr; stdout is only the venv's python path.

say() { echo "$venv_name: $*" >&2; }
die() { say "ERROR: $*"; exit 1; }

# venv_begin DIR: checks the base interpreter and sets venv (DIR made absolute), base_python and
# base_id (the interpreter's version and prefix, part of every stamp).
venv_begin() {
    base_python="${PYTHON:-python3}"
    command -v "$base_python" >/dev/null 2>&1 || die "$base_python not found on PATH (set PYTHON=/path/to/python3)"
    mkdir -p "$(dirname "$1")"
    venv="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
    base_id="$("$base_python" -c 'import sys; print(sys.version.split()[0], sys.base_prefix)')" \
        || die "$base_python does not run"
}

# venv_step MESSAGE COMMAND...: runs COMMAND with its output held back; when it fails, shows the
# output, removes the half-made venv and dies with MESSAGE.
venv_step() {
    local message="$1"
    shift
    if ! "$@" >"$venv_log" 2>&1; then
        cat "$venv_log" >&2
        rm -rf "$venv"
        die "$message"
    fi
}

# venv_ensure STAMP BUILD_FUNCTION: prints the venv's python, first making the venv with
# BUILD_FUNCTION (which runs its commands through venv_step) unless its stamp is STAMP already.
venv_ensure() {
    local stamp_want="$1" build="$2" stamp_file="$venv/.switchboard-stamp"
    venv_ready() { [ -x "$venv/bin/python" ] && [ -f "$stamp_file" ] && [ "$(cat "$stamp_file")" = "$stamp_want" ]; }
    if [ "${PYTHON_ENV_CHECK:-}" = 1 ]; then   # the tests ask this way; they build nothing
        venv_ready || die "$venv is missing or stale: scripts/test-prerequisites.sh (or this script) makes it"
        echo "$venv/bin/python"
        return 0
    fi
    if command -v flock >/dev/null 2>&1; then   # two test JVMs or two shells make one venv once
        exec 9>"$venv.lock"
        flock -w 600 9 || die "timed out waiting for another build of $venv"
    fi
    if ! venv_ready; then
        rm -rf "$venv"
        venv_work="$(mktemp -d)"
        venv_log="$venv_work/log"
        trap 'rm -rf "$venv_work"' EXIT
        "$build"
        echo "$stamp_want" >"$stamp_file"
        say "ready"
    fi
    echo "$venv/bin/python"
}
