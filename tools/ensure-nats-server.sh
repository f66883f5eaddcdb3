#!/bin/sh
# Prints the path of the nats-server that tests use when they run servers of their own
# (clusters, partitions, kills). The machine's nats-server may be old: Debian 12 ships 2.9.10.
# Clustered consumers of NATS before 2.11 can skip a message for good after a leader change
# under a partition, so a test of partitions would fail on the server, not on our code.
# The images we ship run a current NATS (nats:2-alpine), so the tests run one too.
#
# The binary comes from Debian's nats-server package of the next release (forky).
# apt-get downloads it and checks Debian's signatures, as for any package.
# It is unpacked into node_modules/.cache/nats-server once; later calls print the cached path.
# NATS_SERVER_BIN, when set, is printed instead and nothing is downloaded.
set -eu

if [ -n "${NATS_SERVER_BIN:-}" ]; then
  echo "$NATS_SERVER_BIN"
  exit 0
fi

# The version the tests were last run with. When Debian has moved on, its current one is taken.
VERSION=2.15.1-1
SUITE=forky
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=$ROOT/node_modules/.cache/nats-server
BIN=$CACHE/nats-server

if [ -x "$BIN" ]; then
  echo "$BIN"
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1 || ! command -v dpkg-deb >/dev/null 2>&1; then
  echo "ensure-nats-server: apt-get is not available: set NATS_SERVER_BIN to a nats-server 2.11 or later" >&2
  exit 1
fi

# One download at a time: jest runs test files in parallel.
mkdir -p "$CACHE"
(
  flock -w 300 9
  [ -x "$BIN" ] && exit 0
  WORK=$(mktemp -d)
  trap 'rm -rf "$WORK"' EXIT
  mkdir -p "$WORK/lists/partial" "$WORK/cache/archives/partial" "$WORK/parts" "$WORK/unpacked"
  echo "deb http://deb.debian.org/debian $SUITE main" >"$WORK/sources.list"
  # apt-get on its own lists and cache: the machine's sources and packages are left alone.
  set -- -qq \
    -o "Dir::Etc::sourcelist=$WORK/sources.list" -o "Dir::Etc::sourceparts=$WORK/parts" \
    -o "Dir::State::Lists=$WORK/lists" -o "Dir::Cache=$WORK/cache" -o "Dir::State::status=/dev/null" \
    -o "APT::Sandbox::User=$(id -un)" -o "Acquire::Languages=none"
  apt-get "$@" update >&2
  cd "$WORK"
  if ! apt-get "$@" download "nats-server=$VERSION" >&2 2>/dev/null; then
    echo "ensure-nats-server: Debian $SUITE no longer has nats-server $VERSION; taking its current one" >&2
    apt-get "$@" download nats-server >&2
  fi
  dpkg-deb -x nats-server_*.deb unpacked
  cp unpacked/usr/sbin/nats-server "$BIN.partial"
  mv "$BIN.partial" "$BIN"
  echo "ensure-nats-server: $("$BIN" --version) in $BIN" >&2
) 9>"$CACHE/.lock"

echo "$BIN"
