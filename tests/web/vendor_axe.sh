#!/usr/bin/env bash
# Brings axe-core, the accessibility checker the browser tests run in the page
# (tests/web/test_axe.py), into tests/web/vendor/ from the npm registry: the pinned
# version, its tarball checked against the registry's integrity hash recorded here, then
# its minified build and licences copied as they are. It is a test-only asset: the server
# never serves it (the tests inject it into the page). The result is committed, so
# testing needs no npm. `vendor_axe.sh --check` fetches again and fails if the committed
# copy differs.
# To upgrade: change VERSION and INTEGRITY (`npm view axe-core@X dist.integrity`), run
# this script, run tests/web/test_axe.py, commit the folder.
set -euo pipefail

NAME="axe-core"
VERSION="4.14.1"
INTEGRITY="sha512-FHfa+lmNjQZfJz1q8wKqIDwC6DExcHt/pkjNQb09a3NPjCKg2rhu5qb2S4r76ASyFNNtuFooJpZe37OgudVGtQ=="
FILES=(axe.min.js LICENSE LICENSE-3RD-PARTY.txt)

here="$(cd "$(dirname "$0")" && pwd)"
dest="$here/vendor/axe-core-$VERSION"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

command -v npm >/dev/null || { echo "vendor_axe.sh: npm is needed (apt-get install npm)" >&2; exit 1; }
(cd "$tmp" && npm pack --silent "$NAME@$VERSION" >/dev/null)
tgz="$(ls "$tmp"/*.tgz)"
got="sha512-$(node -e 'const c=require("crypto"),f=require("fs");
process.stdout.write(c.createHash("sha512").update(f.readFileSync(process.argv[1])).digest("base64"))' "$tgz")"
if [ "$got" != "$INTEGRITY" ]; then
    echo "vendor_axe.sh: $NAME@$VERSION integrity mismatch: got $got" >&2
    exit 1
fi
tar -xzf "$tgz" -C "$tmp" "${FILES[@]/#/package/}"

out="$tmp/out"
mkdir -p "$out"
cp "$tmp/package/axe.min.js" "$out/axe.min.js"
cp "$tmp/package/LICENSE" "$out/LICENSE.txt"
cp "$tmp/package/LICENSE-3RD-PARTY.txt" "$out/LICENSE-3RD-PARTY.txt"
{
    echo "$NAME $VERSION (MPL-2.0 licence: LICENSE.txt; bundled code: LICENSE-3RD-PARTY.txt),"
    echo "from the npm registry by tests/web/vendor_axe.sh. A test-only asset, never served."
    echo "tarball integrity: $INTEGRITY"
    echo "files: axe.min.js, LICENSE as LICENSE.txt, LICENSE-3RD-PARTY.txt, unchanged."
    (cd "$out" && sha256sum axe.min.js LICENSE.txt LICENSE-3RD-PARTY.txt)
} > "$out/README.txt"

if [ "${1:-}" = "--check" ]; then
    diff -r "$out" "$dest" && echo "vendor_axe.sh: $dest matches $NAME@$VERSION"
    exit
fi
rm -rf "$here/vendor"
mkdir -p "$dest"
cp "$out"/* "$dest/"
echo "vendor_axe.sh: $NAME@$VERSION in $dest"
