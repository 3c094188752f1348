import { describe, expect, it } from 'vitest';
import { databaseMatches, holds, privilegeList, readGrants } from '../src/doctor/grants.js';

describe('doctor: reading SHOW GRANTS', () => {
  it('reads MySQL 8+ global, database-level and dynamic grants', () => {
    const g = readGrants(
      [
        'GRANT USAGE ON *.* TO `app`@`%`',
        'GRANT PROCESS, CONNECTION_ADMIN ON *.* TO `app`@`%`',
        'GRANT SELECT, INSERT, UPDATE, DELETE, CREATE ON `shop`.* TO `app`@`%`',
      ],
      'shop',
    );
    expect(['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'CREATE'].every((p) => holds(g, p))).toBe(true);
    expect(holds(g, 'CREATE ROUTINE')).toBe(false);
    expect(holds(g, 'PROCESS')).toBe(true);
    expect(g.doubts).toEqual([]);
  });

  it("reads MariaDB's ALL PRIVILEGES, IDENTIFIED BY and column lists; ALL on a database does not give global-only privileges", () => {
    const g = readGrants(
      [
        "GRANT USAGE ON *.* TO `app`@`localhost` IDENTIFIED BY PASSWORD '*AB12'",
        'GRANT ALL PRIVILEGES ON `shop`.* TO `app`@`localhost` WITH GRANT OPTION',
        'GRANT SELECT (`id`, `name`), INSERT ON `other`.`t` TO `app`@`localhost`',
      ],
      'shop',
    );
    expect(holds(g, 'CREATE ROUTINE')).toBe(true);
    expect(holds(g, 'EXECUTE')).toBe(true);
    expect(holds(g, 'PROCESS')).toBe(false);
    expect(g.doubts).toEqual([]); // the table grant is on another database
    expect(privilegeList('SELECT (`id`, `name`), ALL PRIVILEGES, CREATE  ROUTINE')).toEqual(['SELECT', 'ALL', 'CREATE ROUTINE']);
  });

  it('matches wildcard database patterns, and notes roles, partial revokes and table-level grants on the database as doubts', () => {
    expect(databaseMatches('shop%', 'shop_eu')).toBe(true);
    expect(databaseMatches('shop\\_eu', 'shopxeu')).toBe(false);
    expect(databaseMatches('shop_eu', 'shopxeu')).toBe(true);
    const g = readGrants(
      [
        'GRANT `reader`@`%` TO `app`@`%`',
        'REVOKE INSERT ON `shop`.* FROM `app`@`%`',
        'GRANT SELECT ON `shop`.`taskrow_queue_jobs` TO `app`@`%`',
        "GRANT PROXY ON ''@'%' TO 'app'@'%'",
      ],
      'shop',
    );
    expect(g.doubts).toHaveLength(3);
    expect(holds(g, 'SELECT')).toBe(false);
  });
});
