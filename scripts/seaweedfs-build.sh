#!/usr/bin/env bash
# Builds SeaweedFS's `weed` binary (the S3-compatible server the export
# storage tests run against) from its Go module, once per version, and
# prints the binary's path on stdout (diagnostics go to stderr).
#
# The module's go.mod carries replace directives, so it cannot be
# `go install`ed: the script downloads the module (`go mod download -json`),
# copies its directory out of the read-only module cache and runs
# `go build ./weed` there. The binary is cached under
# ${XDG_CACHE_HOME:-~/.cache}/cryptointel/seaweedfs-VERSION/weed, so only
# the first run on a machine pays for the build (about five minutes on two
# cores); later runs only print the path.
#
# With --cached it prints the path only when the binary is already built,
# and exits 1 otherwise.
#
# Overrides: SEAWEEDFS_VERSION (the pinned module version below),
# SEAWEEDFS_CACHE (the cache directory).
set -euo pipefail

version=${SEAWEEDFS_VERSION:-v0.0.0-20261109003541-7506e5f91cd6}
module=github.com/seaweedfs/seaweedfs
cache=${SEAWEEDFS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cryptointel/seaweedfs-$version}
bin=$cache/weed

if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi
# --cached: only say whether it is built (exit 1 when not), build nothing.
if [ "${1:-}" = --cached ]; then
  exit 1
fi
command -v go >/dev/null || { echo "seaweedfs-build: go is not installed" >&2; exit 1; }

mkdir -p "$(dirname "$cache")"
# One build at a time per machine: parallel test runs wait for the first.
exec 9>"$cache.lock"
flock 9
if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi

echo "seaweedfs-build: building $module@$version (once; a few minutes)" >&2
work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
# Outside any module, so the download does not touch a go.mod.
dir=$(cd "$work" && GOFLAGS=-mod=mod go mod download -json "$module@$version" |
  sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
if [ -z "$dir" ] || [ ! -d "$dir" ]; then
  echo "seaweedfs-build: go mod download $module@$version gave no directory" >&2
  exit 1
fi
cp -r "$dir" "$work/src"
chmod -R u+w "$work/src"
(cd "$work/src" && CGO_ENABLED=0 GOFLAGS=-buildvcs=false go build -trimpath -o "$work/weed" ./weed) >&2
mkdir -p "$cache"
mv "$work/weed" "$bin.tmp"
mv "$bin.tmp" "$bin"
echo "$bin"
