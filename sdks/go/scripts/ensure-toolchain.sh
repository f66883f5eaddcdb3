#!/bin/sh
# Makes sure a Go toolchain is on the PATH.
# When `go` is found, it prints nothing and changes nothing.
# Otherwise it installs Debian's golang-go package (Go 1.19 on bookworm) with apt-get.
# It reads the package lists again only when the install fails without them.
set -eu

if command -v go >/dev/null 2>&1; then
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-toolchain: go is missing and apt-get is not available: install Go 1.19 or later" >&2
  exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
  else
    echo "ensure-toolchain: installing golang-go needs root" >&2
    exit 1
  fi
fi

export DEBIAN_FRONTEND=noninteractive
echo "ensure-toolchain: installing golang-go" >&2
# One installer at a time, shared with the other SDKs' scripts: jest runs their specs in parallel,
# and apt-get fails at once when another holds its lock. Go may have arrived while this waited.
(
  flock -w 600 9
  command -v go >/dev/null 2>&1 && exit 0
  if ! $SUDO apt-get install -y -qq golang-go >/dev/null; then
    $SUDO apt-get update -qq >/dev/null
    $SUDO apt-get install -y -qq golang-go >/dev/null
  fi
) 9>/tmp/licensing-sdk-ensure-toolchain.lock

if ! command -v go >/dev/null 2>&1; then
  echo "ensure-toolchain: golang-go is installed but go is not on the PATH" >&2
  exit 1
fi
