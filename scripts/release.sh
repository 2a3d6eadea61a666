#!/usr/bin/env bash
# release.sh: the release archives of cryptointel, reproducibly.
#
#   scripts/release.sh [OUT_DIR]              every platform of PLATFORMS into OUT_DIR (dist)
#   scripts/release.sh binary OS ARCH FILE    one binary, built as the archives' are (make image uses it)
#
# For each OS/ARCH of PLATFORMS (default: linux and darwin, amd64 and arm64)
# it writes cryptointel_VERSION_OS_ARCH.tar.gz holding the static binary
# (CGO_ENABLED=0, -trimpath, the version stamped in), LICENSE, README.md and
# CHANGELOG.md; a CycloneDX SBOM of each binary
# (cryptointel_VERSION_OS_ARCH.cdx.json, from the module versions and hashes
# the toolchain embeds: tools/sbom); and SHA256SUMS over all of them.
#
# The same commit gives byte-identical files: the build drops paths and
# build ids, and the archives sort their entries and give each the commit's
# time (SOURCE_DATE_EPOCH, from git unless set), owner 0:0 and fixed modes;
# gzip leaves out name and time. VERSION defaults to `git describe --tags
# --always --dirty`.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
GO="${GO:-go}"
VERSION="${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}"
SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}"
export SOURCE_DATE_EPOCH
PLATFORMS="${PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64}"

# build OS ARCH FILE: the release binary for one platform.
build() {
	CGO_ENABLED=0 GOOS="$1" GOARCH="$2" "$GO" build -trimpath -buildvcs=true \
		-ldflags "-s -w -buildid= -X main.version=$VERSION" -o "$3" ./cmd/cryptointel
}

if [ "${1:-}" = binary ]; then
	[ $# -eq 4 ] || { echo "usage: $0 binary OS ARCH FILE" >&2; exit 2; }
	build "$2" "$3" "$4"
	exit 0
fi

out="${1:-dist}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

files=()
for platform in $PLATFORMS; do
	os="${platform%/*}" arch="${platform#*/}"
	name="cryptointel_${VERSION}_${os}_${arch}"
	echo "release: $name" >&2
	stage="$work/$name"
	mkdir -p "$stage"
	build "$os" "$arch" "$stage/cryptointel"
	cp LICENSE README.md CHANGELOG.md "$stage/"
	chmod 0755 "$stage/cryptointel"
	chmod 0644 "$stage/LICENSE" "$stage/README.md" "$stage/CHANGELOG.md"
	touch -h -d "@$SOURCE_DATE_EPOCH" "$stage" "$stage"/*
	tar --sort=name --format=gnu --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner \
		-C "$work" -cf - "$name" | gzip -n -9 >"$out/$name.tar.gz"
	"$GO" run ./tools/sbom -name cryptointel -o "$out/$name.cdx.json" "$stage/cryptointel"
	files+=("$name.tar.gz" "$name.cdx.json")
done
(cd "$out" && sha256sum "${files[@]}" >SHA256SUMS)
echo "release: $VERSION in $out ($(echo "$PLATFORMS" | wc -w) platforms; SHA256SUMS)" >&2
