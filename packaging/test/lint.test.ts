import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// publint --strict and @arethetypeswrong/cli over every public package's tarball (scripts/check-packages.sh).
const root = fileURLToPath(new URL('../..', import.meta.url));

describe('publint and arethetypeswrong', () => {
  it('find no problem in any public package', () => {
    const r = spawnSync('bash', ['scripts/check-packages.sh'], { cwd: root, encoding: 'utf8', maxBuffer: 64 << 20 });
    const out = r.stdout + r.stderr;
    const packages = ['cli', 'core', 'dashboard', 'drizzle', 'knex', 'kysely', 'mariadb', 'mysql2', 'sequelize', 'servers', 'typeorm'];
    expect(out.match(/^== @taskrow\/\S+/gm)).toEqual(packages.map((p) => `== @taskrow/${p}`));
    expect(out.match(/All good!/g)?.length).toBe(packages.length);
    expect(out.match(/No problems found/g)?.length).toBe(packages.length);
    expect(r.status, out).toBe(0);
  }, 600_000);
});
