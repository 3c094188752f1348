#!/usr/bin/env node
// Run after `tsc` in a public package (cwd = the package): adds the CommonJS side of its exports map.
//
// taskrow ships one ES module build. `require('@taskrow/x')` resolves to dist/cjs/<entry>.js, a
// one-line CommonJS file that `require()`s the ES module build (Node's require(esm): Node 20.19+,
// 22.12+), so `require` and `import` share ONE instance of each module: no dual-package hazard,
// `instanceof TaskrowError` holds whichever way the application loads taskrow.
//
// TypeScript's node16 resolution treats a `.d.ts` beside an ES module as ESM, which a CommonJS file
// may not import; so dist/cjs/ also holds a copy of the declarations (and their maps, re-pointed at
// ../../src) under a `{"type":"commonjs"}` package.json, and the `require` condition's `types` point
// there. Both trees describe the same code. In that copy, type imports of other packages (not
// @taskrow/*, not node:) carry `resolution-mode: "import"`, as the ES module build really imports
// them: an ES-module-only dependency (Kysely 0.29) then type-checks from CommonJS too (TypeScript 5.3+).
import { mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
const out = join('dist', 'cjs');
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
writeFileSync(join(out, 'package.json'), '{ "type": "commonjs" }\n');

/** A one-line import of another package's types, as tsc emits them in declarations. */
const EXTERNAL_IMPORT = /^import (?:type )?(\{[^}\n]*\}|\* as \w+|\w+) from '((?!@taskrow\/|node:|\.)[^']+)';$/gm;

/** The same import, type-only and resolved as the ES module build resolves it. */
function asImportMode(_line, names, specifier) {
  return `import type ${names.replace(/\btype /g, '')} from '${specifier}' with { 'resolution-mode': 'import' };`;
}

/** Every file under `dir` (relative paths), skipping dist/cjs itself. */
function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (path === out) return [];
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}

for (const file of walk('dist')) {
  const target = join(out, relative('dist', file));
  if (file.endsWith('.d.ts')) {
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, readFileSync(file, 'utf8').replace(EXTERNAL_IMPORT, asImportMode));
  } else if (file.endsWith('.d.ts.map')) {
    const map = JSON.parse(readFileSync(file, 'utf8'));
    map.sources = map.sources.map((s) => `../${s}`);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, JSON.stringify(map));
  }
}

const entries = Object.values(pkg.exports ?? {}).flatMap((e) => (e.require ? [e.require.default] : []));
if (entries.length === 0) throw new Error(`${pkg.name}: no "require" condition in the exports map`);
for (const entry of entries) {
  const shim = entry.replace(/^\.\//, '');
  const esm = relative(dirname(shim), shim.replace('dist/cjs/', 'dist/'));
  mkdirSync(dirname(shim), { recursive: true });
  writeFileSync(
    shim,
    `'use strict';\n// The ES module build, loaded through require(esm) (Node 20.19+, 22.12+): one instance for require and import.\nmodule.exports = require('./${esm}');\n`,
  );
}
