#!/usr/bin/env node
// Fails when a package's source has an import circle: two or more files that import each other,
// directly or through others (type-only imports count too), or two or more sibling folders that do
// (a file of `claim/` importing `settle/` while one of `settle/` imports `claim/`): folders are
// layers, each importing only those below it. Reads relative `import` / `export ... from` /
// `import()` specifiers of every .ts file under each package's src/ and finds the strongly
// connected components of both graphs (Tarjan). Usage: node scripts/check-circles.mjs [dir ...]
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const packages = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'packages');
const roots = process.argv.length > 2 ? process.argv.slice(2) : fs.readdirSync(packages).map((p) => path.join(packages, p, 'src'));

/** Every .ts file under `dir`. */
const walk = (dir) =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? walk(p) : e.name.endsWith('.ts') ? [p] : [];
  });

const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm;

/** The files `file` imports, resolved to .ts paths that exist. */
function importsOf(file) {
  const text = fs.readFileSync(file, 'utf8');
  const out = new Set();
  for (const [, spec] of text.matchAll(SPECIFIER)) {
    const base = path.resolve(path.dirname(file), spec);
    const candidates = [base.replace(/\.js$/, '.ts'), `${base}.ts`, path.join(base, 'index.ts')];
    const hit = candidates.find((c) => fs.existsSync(c) && fs.statSync(c).isFile());
    if (hit) out.add(hit);
  }
  return [...out];
}

/** Strongly connected components of more than one file (or a file importing itself). */
function circles(graph) {
  let index = 0;
  const idx = new Map(),
    low = new Map(),
    stack = [],
    on = new Set(),
    found = [];
  const visit = (v) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) !== idx.get(v)) return;
    const scc = [];
    let w;
    do {
      w = stack.pop();
      on.delete(w);
      scc.push(w);
    } while (w !== v);
    if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(scc);
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return found;
}

/**
 * The graph of sibling folders: for each import between files in two different folders under
 * the same parent, an edge between those two folders (named by their path from `root`).
 */
function folderGraph(root, graph) {
  const folders = new Map();
  for (const [from, targets] of graph) {
    for (const to of targets) {
      const a = path.relative(root, from).split(path.sep);
      const b = path.relative(root, to).split(path.sep);
      let i = 0;
      while (i < a.length - 1 && i < b.length - 1 && a[i] === b[i]) i++;
      if (i >= a.length - 1 || i >= b.length - 1) continue; // a file of the common folder itself
      const [x, y] = [a.slice(0, i + 1).join('/'), b.slice(0, i + 1).join('/')];
      if (!folders.has(x)) folders.set(x, []);
      if (!folders.get(x).includes(y)) folders.get(x).push(y);
    }
  }
  return folders;
}

let failed = 0,
  files = 0;
for (const root of roots.filter((r) => fs.existsSync(r))) {
  const base = path.resolve(root);
  const graph = new Map(walk(base).map((f) => [f, importsOf(f)]));
  files += graph.size;
  for (const scc of circles(graph)) {
    failed++;
    console.error(
      `import circle of ${scc.length} files in ${root}:\n${scc
        .map((f) => `  ${path.relative(base, f)}`)
        .sort()
        .join('\n')}`,
    );
  }
  for (const scc of circles(folderGraph(base, graph))) {
    failed++;
    console.error(
      `import circle of ${scc.length} folders in ${root} (each imports the next, round to the first):\n${scc
        .sort()
        .map((f) => `  ${f}/`)
        .join('\n')}`,
    );
  }
}
console.log(failed === 0 ? `check-circles: no import circle in ${files} files or their folders` : `check-circles: ${failed} import circle(s)`);
process.exit(failed === 0 ? 0 : 1);
