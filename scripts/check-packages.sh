#!/usr/bin/env bash
# Lints what npm would publish, for every public package (packages/* without "private": true):
# publint --strict (package.json fields against the packed files) and @arethetypeswrong/cli (types
# resolving under node10, node16 from CommonJS and from ESM, and bundler). Run after `pnpm build`.
# Exits non-zero when either tool reports a problem in any package.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
packs=$(mktemp -d)
trap 'rm -rf "$packs"' EXIT
status=0
for dir in packages/*/; do
  dir=${dir%/}
  if [ "$(node -p "require('./$dir/package.json').private === true")" = true ]; then continue; fi
  name=$(node -p "require('./$dir/package.json').name")
  echo "== $name"
  tarball=$(cd "$dir" && pnpm pack --pack-destination "$packs" | tail -n 1)
  "$root/node_modules/.bin/publint" run "$tarball" --strict || status=1
  "$root/node_modules/.bin/attw" --pack "$tarball" --format ascii || status=1
done
exit $status
