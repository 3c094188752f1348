#!/usr/bin/env node
// Checks the code in the Markdown docs, so that a doc cannot drift from the packages it describes.
//
// Files: README.md, docs/**/*.md and packages/*/README.md, except those in NOT_YET below.
//
// 1. Every ```ts or ```typescript block is written to a temporary folder as an ES module and
//    type-checked with tsc (strict, NodeNext resolution) against the workspace packages' built types,
//    so run `pnpm build` first. An error is reported as `FILE.md:LINE:COLUMN` of the Markdown file.
// 2. Words after the language in the info string mark a block:
//    ```ts fragment  a piece of a program. Names it uses without declaring them are allowed (they have
//                    no type); `tr` (a Taskrow) and `pool` (a mysql2 promise Pool) are declared for
//                    every fragment, so calls on them are checked. Everything else is checked as above.
//    ```ts skip      not checked at all (say why in the text around it).
//    Renderers show only the language, so the marks do not show on the page.
// 3. `<!-- include: PATH -->` or `<!-- include: PATH lines A-B -->` on the line before a fenced block
//    (any language): the block MUST equal that file, or its lines A to B, byte for byte. The file is
//    checked where it lives (examples/getting-started is type-checked by its package's `typecheck`
//    and run by conformance/test/docs/getting-started.test.ts), not again as a block.
//    `node scripts/check-docs.mjs --write` rewrites such blocks from their files.
//
// Blocks of other languages (```js, ```sh, ...) are not checked unless they are included.
//
// Usage: node scripts/check-docs.mjs [--write] [--all] (--all: the NOT_YET files too). Exits 1 on any failure. Run by `pnpm lint` and
// scripts/test.sh.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = fileURLToPath(new URL('..', import.meta.url));
const write = process.argv.includes('--write');
const all = process.argv.includes('--all');

// Docs not checked yet, each with the reason; bring one in by fixing its blocks and deleting its line.
const NOT_YET = new Map([]);

// Diagnostics a fragment may have: a name it uses without declaring (and what that leaves untyped).
const FRAGMENT_CODES = new Set([2304, 2552, 2503, 2749, 7005, 7006, 7031, 7034, 18004]);

/** The Markdown files in scope, relative to the root, in a stable order. */
function docFiles() {
  const files = ['README.md'];
  if (existsSync(join(root, 'docs'))) {
    const docs = readdirSync(join(root, 'docs'), { recursive: true, encoding: 'utf8' });
    files.push(
      ...docs
        .filter((f) => f.endsWith('.md'))
        .map((f) => `docs/${f}`)
        .sort(),
    );
  }
  for (const p of readdirSync(join(root, 'packages')).sort()) {
    if (existsSync(join(root, 'packages', p, 'README.md'))) files.push(`packages/${p}/README.md`);
  }
  return all ? files : files.filter((f) => !NOT_YET.has(f));
}

/**
 * The fenced blocks of one Markdown text: `{ line, lang, marks, include, indent, start, end, code }`,
 * `line` the 1-based line of the opening fence, `start`/`end` the 0-based indices of the first code
 * line and of the closing fence.
 */
function blocksOf(text) {
  const lines = text.split('\n');
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([^`\s]*)\s*(.*)$/.exec(lines[i]);
    if (!open) continue;
    const [, indent, fence, lang, rest] = open;
    let j = i + 1;
    // The closing fence: the same character, at least as many times, and nothing else on the line.
    const closes = (l) => l.trim().length >= fence.length && [...l.trim()].every((c) => c === fence[0]);
    while (j < lines.length && !closes(lines[j])) j++;
    let k = i - 1;
    while (k >= 0 && lines[k].trim() === '') k--;
    const inc = k >= 0 ? /^\s*<!--\s*include:\s*(\S+)(?:\s+lines\s+(\d+)-(\d+))?\s*-->\s*$/.exec(lines[k]) : null;
    const code = lines
      .slice(i + 1, j)
      .map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l.trimStart()))
      .join('\n');
    blocks.push({
      line: i + 1,
      lang: lang.toLowerCase(),
      marks: rest.split(/\s+/).filter(Boolean),
      include: inc ? { path: inc[1], from: inc[2] ? Number(inc[2]) : undefined, to: inc[3] ? Number(inc[3]) : undefined } : undefined,
      indent,
      start: i + 1,
      end: j,
      code,
    });
    i = j;
  }
  return blocks;
}

/** The text an include names (a whole file, or lines A to B), without its final newline. */
function included(inc) {
  const file = join(root, inc.path);
  if (!existsSync(file)) return undefined;
  const text = readFileSync(file, 'utf8').replace(/\n$/, '');
  if (inc.from === undefined) return text;
  return text
    .split('\n')
    .slice(inc.from - 1, inc.to)
    .join('\n');
}

/**
 * A node_modules folder for the temporary modules: every workspace package under its name, and every
 * other package any workspace package depends on (the first found), as symlinks.
 */
function linkModules(dir) {
  const target = join(dir, 'node_modules');
  mkdirSync(join(target, '@types'), { recursive: true });
  const sources = ['node_modules', 'conformance/node_modules'];
  for (const group of ['packages', 'examples']) {
    for (const p of readdirSync(join(root, group)).sort()) sources.push(`${group}/${p}/node_modules`);
  }
  const seen = new Set();
  const link = (name, from) => {
    if (seen.has(name)) return;
    seen.add(name);
    mkdirSync(dirname(join(target, name)), { recursive: true });
    symlinkSync(from, join(target, name));
  };
  for (const p of readdirSync(join(root, 'packages')).sort()) {
    const pkg = join(root, 'packages', p, 'package.json');
    if (existsSync(pkg)) link(JSON.parse(readFileSync(pkg, 'utf8')).name, join(root, 'packages', p));
  }
  for (const source of sources.map((s) => join(root, s)).filter((s) => existsSync(s))) {
    for (const entry of readdirSync(source)) {
      if (entry.startsWith('.')) continue;
      if (entry.startsWith('@')) {
        for (const sub of readdirSync(join(source, entry))) link(`${entry}/${sub}`, join(source, entry, sub));
      } else link(entry, join(source, entry));
    }
  }
}

/** Type-checks `modules` (`{ file, text }`) in one program; the prelude only for fragments. */
function typeCheck(dir, modules, fragments) {
  const { options, errors } = ts.convertCompilerOptionsFromJson(
    {
      target: 'ES2022',
      lib: ['ES2023'],
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      esModuleInterop: true,
      skipLibCheck: true,
      noEmit: true,
      types: ['node'],
    },
    dir,
  );
  if (errors.length > 0) throw new Error(ts.formatDiagnostics(errors, host(dir)));
  const names = modules.map((m) => m.file);
  if (fragments) {
    const prelude = join(dir, 'fragment-prelude.d.ts');
    writeFileSync(
      prelude,
      [
        "import type { Taskrow } from '@taskrow/core';",
        "import type { Pool } from 'mysql2/promise';",
        'declare global {',
        '  const tr: Taskrow<any>;',
        '  const pool: Pool;',
        '}',
        '',
      ].join('\n'),
    );
    names.push(prelude);
  }
  const program = ts.createProgram(names, options);
  return ts.getPreEmitDiagnostics(program);
}

function host(dir) {
  return { getCanonicalFileName: (f) => f, getCurrentDirectory: () => dir, getNewLine: () => '\n' };
}

const failures = [];
let checked = 0;
let fragments = 0;
let skipped = 0;
let includes = 0;
if (!existsSync(join(root, 'packages/core/dist'))) {
  console.error('check-docs: packages/core/dist is missing; build the packages first (pnpm build)');
  process.exit(1);
}
const dir = mkdtempSync(join(tmpdir(), 'taskrow-docs-'));
try {
  writeFileSync(join(dir, 'package.json'), '{ "type": "module", "private": true }\n');
  mkdirSync(join(dir, 'blocks'));
  linkModules(dir);
  const modules = { whole: [], fragment: [] };
  const files = docFiles();
  for (const md of files) {
    const text = readFileSync(join(root, md), 'utf8');
    const blocks = blocksOf(text);
    let rewritten = text.split('\n');
    for (const b of blocks.slice().reverse()) {
      if (b.include) {
        includes++;
        const want = included(b.include);
        if (want === undefined) failures.push(`${md}:${b.line}: includes ${b.include.path}, which does not exist`);
        else if (b.code !== want) {
          if (write) rewritten.splice(b.start, b.end - b.start, ...want.split('\n').map((l) => (l === '' ? l : b.indent + l)));
          else failures.push(`${md}:${b.line}: the block differs from ${b.include.path}; run node scripts/check-docs.mjs --write`);
        }
        continue;
      }
      if (b.lang !== 'ts' && b.lang !== 'typescript') continue;
      if (b.marks.includes('skip')) {
        skipped++;
        continue;
      }
      const fragment = b.marks.includes('fragment');
      const file = join(dir, 'blocks', `${md.replace(/[/.]/g, '_')}_L${b.line}.ts`);
      writeFileSync(file, `${b.code}\nexport {};\n`);
      (fragment ? modules.fragment : modules.whole).push({ file, md, line: b.line });
      fragment ? fragments++ : checked++;
    }
    if (write) {
      rewritten = rewritten.join('\n');
      if (rewritten !== text) {
        writeFileSync(join(root, md), rewritten);
        console.log(`check-docs: rewrote the included blocks of ${md}`);
      }
    }
  }
  for (const kind of ['whole', 'fragment']) {
    if (modules[kind].length === 0) continue;
    const where = new Map(modules[kind].map((m) => [m.file, m]));
    for (const d of typeCheck(dir, modules[kind], kind === 'fragment')) {
      const m = d.file && where.get(d.file.fileName);
      if (kind === 'fragment' && m && FRAGMENT_CODES.has(d.code)) continue;
      const message = ts.flattenDiagnosticMessageText(d.messageText, '\n    ');
      if (!m || d.start === undefined) {
        failures.push(`${d.file ? relative(dir, d.file.fileName) : '(no file)'}: error TS${d.code}: ${message}`);
        continue;
      }
      const { line, character } = d.file.getLineAndCharacterOfPosition(d.start);
      failures.push(`${m.md}:${m.line + 1 + line}:${character + 1}: error TS${d.code}: ${message}`);
    }
  }
  const summary =
    `check-docs: ${files.length} files, ${checked} TypeScript blocks and ${fragments} fragments type-checked, ` +
    `${skipped} skipped, ${includes} included blocks compared with their files`;
  if (NOT_YET.size > 0 && !all) console.log(`check-docs: not checked yet: ${[...NOT_YET].map(([f, why]) => `${f} (${why})`).join('; ')}`);
  if (failures.length > 0) {
    console.error(failures.join('\n'));
    console.error(`${summary}: ${failures.length} failures`);
    process.exitCode = 1;
  } else console.log(`${summary}: all pass`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
