#!/usr/bin/env bash
# Packs every public package (pnpm pack, as it would be published) and installs the tarballs with npm
# into scratch applications under DIR (a folder outside the workspace), dependencies from the registry:
#   DIR/app       every package, plus the programs in packaging/app (ESM, CommonJS, TypeScript)
#   DIR/cli-only  @taskrow/cli as `npm install -g` would install it (no optional @taskrow/servers)
# Run after `pnpm build`. packaging/test/pack.test.ts runs this and then the programs.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:?usage: scripts/pack-test.sh DIR (outside the workspace)}
mkdir -p "$dir/packs" "$dir/app" "$dir/cli-only"
dir=$(cd "$dir" && pwd)
case "$dir/" in "$PWD"/*) echo "pack-test: $dir is inside the workspace; npm would resolve from it" >&2; exit 2 ;; esac

for pkg in packages/*/; do
  [ "$(node -p "require('./${pkg}package.json').private === true")" = true ] && continue
  (cd "$pkg" && pnpm pack --pack-destination "$dir/packs" >/dev/null)
done

# package.json of a scratch app: the given tarballs plus registry packages (name@version).
scratch() {
  local target=$1; shift
  node -e '
    const [target, ...specs] = process.argv.slice(1);
    const deps = {};
    for (const s of specs) {
      if (s.endsWith(".tgz")) deps["@taskrow/" + s.replace(/^.*taskrow-(.*)-\d+\.\d+\.\d+.*\.tgz$/, "$1")] = "file:" + s;
      else { const at = s.lastIndexOf("@"); deps[s.slice(0, at)] = s.slice(at + 1); }
    }
    require("fs").writeFileSync(target + "/package.json", JSON.stringify({ name: "taskrow-pack-test", private: true, dependencies: deps }, null, 2));
  ' "$target" "$@"
  (cd "$target" && npm install --prefer-offline --no-fund --no-audit --loglevel=error >&2)
}

node_types=$(node -p "require('./package.json').devDependencies['@types/node']")
cp -R packaging/app/. "$dir/app/"
scratch "$dir/app" "$dir"/packs/*.tgz "@types/node@$node_types" kysely@0.29.9
scratch "$dir/cli-only" "$dir"/packs/taskrow-cli-*.tgz "$dir"/packs/taskrow-core-*.tgz "$dir"/packs/taskrow-mysql2-*.tgz "$dir"/packs/taskrow-dashboard-*.tgz
