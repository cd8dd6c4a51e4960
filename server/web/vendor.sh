#!/usr/bin/env bash
# Brings the web client's one library, @msgpack/msgpack, into static/vendor/ from the
# npm registry: the pinned version, its tarball checked against the registry's
# integrity hash recorded here, then its browser build and licence copied as they are.
# `make vendor` runs this; the result is committed, so neither serving nor testing the
# page needs npm. `vendor.sh --check` fetches again and fails if the committed copy
# differs (a changed file, or a version bump done by hand).
# To upgrade: change VERSION and INTEGRITY (`npm view @msgpack/msgpack@X dist.integrity`),
# run `make vendor`, run the browser tests (tests/web), commit the folder.
set -euo pipefail

NAME="@msgpack/msgpack"
VERSION="3.1.3"
INTEGRITY="sha512-47XIizs9XZXvuJgoaJUIE2lFoID8ugvc0jzSHP+Ptfk8nTbnR8g788wv48N03Kx0UkAv559HWRQ3yzOgzlRNUA=="
FILES=(dist.umd/msgpack.min.js LICENSE)

here="$(cd "$(dirname "$0")" && pwd)"
dest="$here/static/vendor/msgpack-$VERSION"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

command -v npm >/dev/null || { echo "vendor.sh: npm is needed (apt-get install npm)" >&2; exit 1; }
(cd "$tmp" && npm pack --silent "$NAME@$VERSION" >/dev/null)
tgz="$(ls "$tmp"/*.tgz)"
got="sha512-$(node -e 'const c=require("crypto"),f=require("fs");
process.stdout.write(c.createHash("sha512").update(f.readFileSync(process.argv[1])).digest("base64"))' "$tgz")"
if [ "$got" != "$INTEGRITY" ]; then
    echo "vendor.sh: $NAME@$VERSION integrity mismatch: got $got" >&2
    exit 1
fi
tar -xzf "$tgz" -C "$tmp" "${FILES[@]/#/package/}"

out="$tmp/out"
mkdir -p "$out"
cp "$tmp/package/dist.umd/msgpack.min.js" "$out/msgpack.min.js"
cp "$tmp/package/LICENSE" "$out/LICENSE.txt"
{
    echo "$NAME $VERSION (ISC licence: LICENSE.txt), from the npm registry by server/web/vendor.sh."
    echo "tarball integrity: $INTEGRITY"
    echo "files: dist.umd/msgpack.min.js as msgpack.min.js, LICENSE as LICENSE.txt, unchanged."
    (cd "$out" && sha256sum msgpack.min.js LICENSE.txt)
} > "$out/README.txt"

if [ "${1:-}" = "--check" ]; then
    diff -r "$out" "$dest" && echo "vendor.sh: $dest matches $NAME@$VERSION"
    exit
fi
rm -rf "$here/static/vendor"
mkdir -p "$dest"
cp "$out"/* "$dest/"
echo "vendor.sh: $NAME@$VERSION in $dest"
