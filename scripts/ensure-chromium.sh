#!/bin/sh
# Makes sure a Chromium binary is installed for the browser test of the `svc-webhooks emulate` page
# (test/cli/emulate-page.test.ts drives it with playwright-core; no browser is downloaded by npm).
# Installs Debian's `chromium` package with apt-get when running as root and it is missing.
# Prints the binary's path and exits 0 when it is available afterwards, 1 otherwise.
set -u

find_chromium() {
  for name in chromium chromium-browser; do
    path="$(command -v "$name" 2>/dev/null)" && { echo "$path"; return 0; }
  done
  return 1
}

find_chromium && exit 0

if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-chromium: chromium is missing (install it, or run as root on a Debian/Ubuntu machine)" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
# Package lists are often absent on fresh images: update once, then install.
if ! apt-get install -y --no-install-recommends chromium >/dev/null 2>&1; then
  apt-get update -qq >/dev/null 2>&1 || true
  apt-get install -y --no-install-recommends chromium >&2 || exit 1
fi
find_chromium
