#!/usr/bin/env bash
# prereqs.sh — what scripts/test.sh needs from the machine, checked before anything is built.
# Prints every missing piece and, for the system packages a non-root user cannot install, the
# one command to run first. As root (or with passwordless sudo) the packages are installed by
# the test run itself (scripts/install_chromium.sh, scripts/pg.sh), so only the rest is checked.
#
#   bash scripts/prereqs.sh        # exit 0: ready; exit 1: what is missing, and how to get it
set -euo pipefail
missing=()
pkgs=()
command -v cargo >/dev/null || missing+=("cargo (Rust, from rustup)")
if ! command -v python3 >/dev/null || ! python3 -c 'import sys, venv; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    missing+=("python3 >= 3.11 with venv and pip")
fi
command -v npm >/dev/null || missing+=("npm (Node.js: the e2e harness installs the Claude Code CLI with it)")
command -v chromium >/dev/null || pkgs+=(chromium)
command -v chromedriver >/dev/null || pkgs+=(chromium-driver)
# The TLS tests run the distribution's PostgreSQL server (built with OpenSSL).
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || pkgs+=(postgresql)
for m in "${missing[@]}"; do
    echo "prereqs: missing: $m" >&2
done
can_install=0
if [[ $(id -u) == 0 ]] || { command -v sudo >/dev/null && sudo -n true 2>/dev/null; }; then
    can_install=1
fi
if ((${#pkgs[@]})) && ((!can_install)); then
    echo "prereqs: missing system packages: ${pkgs[*]}; run this once first:" >&2
    echo "    sudo apt-get install -y --no-install-recommends ${pkgs[*]}" >&2
fi
# ~10 GB: target/ (debug, every test binary) plus the model, the runtime and the CLI cache.
avail_kb=$(df -Pk . | awk 'NR == 2 { print $4 }')
if [[ -n $avail_kb ]] && ((avail_kb < 10 * 1024 * 1024)); then
    echo "prereqs: warning: $((avail_kb / 1024 / 1024)) GB free here; a test run needs ~10 GB" >&2
fi
if ((${#missing[@]})) || { ((${#pkgs[@]})) && ((!can_install)); }; then
    exit 1
fi
exit 0
