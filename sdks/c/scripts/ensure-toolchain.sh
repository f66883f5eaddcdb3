#!/usr/bin/env bash
# Installs what the C SDK needs to build and test, from Debian's packages, when it is missing:
# a C and C++ compiler, make, CMake, pkg-config and OpenSSL 3's headers (libssl-dev). It prints
# nothing and changes nothing when all of it is there. It needs root (or sudo) only to install.
set -euo pipefail

PACKAGES=(gcc g++ make cmake pkg-config libssl-dev)

installed() {
  [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]
}

missing=()
for package in "${PACKAGES[@]}"; do
  installed "$package" || missing+=("$package")
done
[ "${#missing[@]}" -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-toolchain: missing ${missing[*]}, and this system has no apt-get: install them by hand" >&2
  exit 1
fi
run=()
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "ensure-toolchain: missing ${missing[*]}: run as root, or install them by hand" >&2
    exit 1
  fi
  run=(sudo)
fi

echo "ensure-toolchain: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# One installer at a time, shared with the other SDKs' scripts: jest runs their specs in parallel,
# and apt-get fails at once when another holds its lock.
(
  flock -w 600 9
  "${run[@]}" apt-get update -qq >/dev/null
  "${run[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
) 9>/tmp/licensing-sdk-ensure-toolchain.lock
