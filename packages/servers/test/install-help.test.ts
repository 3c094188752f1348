import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { installerPath } from '../src/index.js';

// The installer runs apt-get and debootstrap as root: --help and a bad argument MUST return before
// any of that (no "[install-servers]" step is logged, nothing is written).
describe('taskrow-install-servers arguments', () => {
  const run = (arg: string) =>
    spawnSync('bash', [installerPath, arg], { encoding: 'utf8', env: { ...process.env, TASKROW_SERVERS_CACHE: '/nonexistent/taskrow-help-test' } });

  it('--help prints the usage and does nothing else', () => {
    for (const arg of ['--help', '-h']) {
      const r = run(arg);
      expect(r.status, arg).toBe(0);
      expect(r.stdout).toMatch(/^usage: taskrow-install-servers \[--help\]/);
      expect(r.stdout).toContain('TASKROW_SERVERS_CACHE');
      expect(r.stderr).toBe('');
    }
  });

  it('refuses an unknown argument with exit 2, pointing at --help', () => {
    const r = run('--yes');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('unknown argument --yes');
    expect(r.stderr).toContain('--help');
    expect(r.stderr).not.toContain('[install-servers]');
  });
});
