#!/usr/bin/env bash
# Makes sure Debian's Python can test and build the Python SDK, from Debian's own packages:
#   python3-cryptography   the SDK's only dependency
#   python3-pytest         its tests
#   python3-build, python3-setuptools, python3-wheel   its wheel and sdist
# Installs whichever is missing with apt-get (as root, or through sudo), then prints the
# interpreter to use on its last line. Set PYTHON to check another interpreter instead: it is then
# only checked, since apt-get installs for Debian's python3.
set -euo pipefail

PACKAGES=(python3-cryptography python3-pytest python3-build python3-setuptools python3-wheel)
MODULES="cryptography, pytest, build, setuptools, wheel"
DEBIAN_PYTHON=/usr/bin/python3
PYTHON=${PYTHON:-$DEBIAN_PYTHON}

log() { echo "ensure-toolchain: $*" >&2; }

has_modules() { "$PYTHON" -c "import $MODULES" 2>/dev/null; }

if has_modules; then
  log "$PYTHON has $MODULES"
  echo "$PYTHON"
  exit 0
fi

if [ "$PYTHON" != "$DEBIAN_PYTHON" ] || ! command -v apt-get >/dev/null || ! command -v dpkg-query >/dev/null; then
  log "$PYTHON lacks some of: $MODULES"
  log "on Debian, install them with: apt-get install ${PACKAGES[*]}"
  exit 1
fi

missing=()
for package in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$package")
  fi
done

if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
  as_root=(sudo -n)
else
  log "missing ${missing[*]:-modules}, and installing needs root: apt-get install ${missing[*]:-${PACKAGES[*]}}"
  exit 1
fi

if [ "${#missing[@]}" -gt 0 ]; then
  log "installing ${missing[*]}"
  # One installer at a time: two test runs may get here together.
  (
    flock -w 600 9
    export DEBIAN_FRONTEND=noninteractive
    "${as_root[@]}" apt-get update -qq >&2
    "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
  ) 9>/tmp/licensing-sdk-ensure-toolchain.lock
fi

if ! has_modules; then
  log "$PYTHON still lacks some of: $MODULES"
  exit 1
fi
log "$PYTHON has $MODULES"
echo "$PYTHON"
