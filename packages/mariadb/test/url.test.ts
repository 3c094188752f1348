import { describe, expect, it } from 'vitest';
import { TaskrowError } from '@taskrow/core';
import { mariadbUrl } from '../src/url.js';

describe('mariadbUrl', () => {
  it('rewrites mysql:// to mariadb:// and keeps user, password, host, port, database and options', () => {
    expect(mariadbUrl('mysql://u%40x:p%3Aw%2F@127.0.0.1:3307/db_1?connectionLimit=4')).toBe('mariadb://u%40x:p%3Aw%2F@127.0.0.1:3307/db_1?connectionLimit=4');
    expect(mariadbUrl('mariadb://u:p@h/db')).toBe('mariadb://u:p@h/db');
  });

  it('adds allowPublicKeyRetrieval only when asked and not already set, nor TLS configured', () => {
    expect(mariadbUrl('mysql://u:p@h/db', { allowPublicKeyRetrieval: true })).toBe('mariadb://u:p@h/db?allowPublicKeyRetrieval=true');
    expect(mariadbUrl('mysql://u:p@h/db?a=1', { allowPublicKeyRetrieval: true })).toBe('mariadb://u:p@h/db?a=1&allowPublicKeyRetrieval=true');
    expect(mariadbUrl('mysql://u:p@h/db?allowPublicKeyRetrieval=false', { allowPublicKeyRetrieval: true })).toBe(
      'mariadb://u:p@h/db?allowPublicKeyRetrieval=false',
    );
    expect(mariadbUrl('mysql://u:p@h/db?ssl=true', { allowPublicKeyRetrieval: true })).toBe('mariadb://u:p@h/db?ssl=true');
    expect(mariadbUrl('mysql://u:p@h/db')).toBe('mariadb://u:p@h/db');
  });

  it('rejects other schemes and non-URLs with INVALID_ARGUMENT, never echoing the password', () => {
    for (const bad of ['postgres://u:secret@h/db', 'not a url secret', '']) {
      let err: unknown;
      try {
        mariadbUrl(bad);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(TaskrowError);
      expect((err as TaskrowError).code).toBe('INVALID_ARGUMENT');
      expect((err as TaskrowError).message).not.toContain('secret');
    }
  });
});
