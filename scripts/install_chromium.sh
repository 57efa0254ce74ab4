#!/usr/bin/env bash
# install_chromium.sh — Debian's Chromium and chromedriver for the viewer's browser tests
# (cli/tests/testsuite/ui_browser.rs). Idempotent: does nothing when both are on PATH. Installs with
# apt-get (root, or sudo without a password), `apt-get update` only when the first install
# fails, every step bounded by `timeout`; fails loudly when they cannot be installed.
set -euo pipefail
if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then
    exit 0
fi
die() { echo "install_chromium: $*" >&2; exit 1; }
SUDO=()
if [[ $(id -u) != 0 ]]; then
    command -v sudo >/dev/null || die "chromium/chromedriver missing and not root (no sudo): apt-get install chromium chromium-driver"
    SUDO=(sudo -n)
fi
command -v apt-get >/dev/null || die "chromium/chromedriver missing and no apt-get: install Chromium and its chromedriver"
pkgs=(chromium chromium-driver)
echo "install_chromium: installing ${pkgs[*]}"
if ! DEBIAN_FRONTEND=noninteractive timeout 900 "${SUDO[@]}" apt-get install -y --no-install-recommends "${pkgs[@]}"; then
    timeout 300 "${SUDO[@]}" apt-get update || die "apt-get update failed"
    DEBIAN_FRONTEND=noninteractive timeout 900 "${SUDO[@]}" apt-get install -y --no-install-recommends "${pkgs[@]}" \
        || die "apt-get install ${pkgs[*]} failed"
fi
command -v chromium >/dev/null && command -v chromedriver >/dev/null \
    || die "installed, but chromium or chromedriver is still not on PATH"
echo "install_chromium: $(chromium --version 2>/dev/null || echo chromium), $(chromedriver --version 2>/dev/null | head -1)"
