import { describe, expect, it } from 'vitest';
import { redactUrl } from '../src/redact.js';

describe('redactUrl', () => {
  // [url, password, what is printed]
  const cases: [string, string, string][] = [
    ['mysql://app:hunter2@db.example:3306/app', 'hunter2', 'mysql://app:***@db.example:3306/app'],
    ['mysql://user:p@ss:w/rd#1@db.example/app', 'p@ss:w/rd#1', 'mysql://user:***@db.example/app'],
    ['mysql://u:1/b@h/db', '1/b', 'mysql://u:***@h/db'],
    ['mariadb://u:%2F%3A%40x@h:1/d', '%2F%3A%40x', 'mariadb://u:***@h:1/d'],
    ['mysql://jürgen:pässwörd€@h/db', 'pässwörd€', 'mysql://jürgen:***@h/db'],
    ['mysql://u:a%zz@@h/db', 'a%zz@', 'mysql://u:***@h/db'],
    ['u:secret@h/db', 'secret', 'u:***@h/db'],
  ];
  it.each(cases)('hides the whole password of %s', (url, password, printed) => {
    const out = redactUrl(url);
    expect(out).toBe(printed);
    expect(out).not.toContain(password);
  });

  it('leaves a URL with no password as it is', () => {
    for (const url of ['mysql://app@h/db', 'mysql://h:3306/db', 'not a url at all']) expect(redactUrl(url)).toBe(url);
  });
});
