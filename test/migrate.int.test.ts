import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { migrate, MIGRATIONS_DIR, readMigrations } from '../src/migrate';
import { createTestDatabase, type TestDatabase } from './helpers/db';

describe('migrate', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.drop();
  });

  it('records every migration in _prisma_migrations with its sha256, and a second run is a no-op', async () => {
    const names = readMigrations().map((m) => m.name);
    const rows = await t.db.$queryRaw<{ migration_name: string; checksum: string; finished_at: Date | null }[]>`
      SELECT migration_name, checksum, finished_at FROM "_prisma_migrations" ORDER BY migration_name`;
    expect(rows.map((r) => r.migration_name)).toEqual(names);
    for (const row of rows) {
      const sql = readFileSync(path.join(MIGRATIONS_DIR, row.migration_name, 'migration.sql'));
      expect(row.checksum).toBe(createHash('sha256').update(sql).digest('hex'));
      expect(row.finished_at).toBeInstanceOf(Date);
    }
    const again = await migrate(t.url);
    expect(again.applied).toEqual([]);
    expect(again.skipped).toEqual(names);
  });

  it('concurrent runners apply nothing twice', async () => {
    const results = await Promise.all([migrate(t.url), migrate(t.url)]);
    expect(results.flatMap((r) => r.applied)).toEqual([]);
  });

  it('gives a schema the generated client can use', async () => {
    const source = await t.db.masterSource.create({ data: { name: 'sim', kind: 'VALVE_UDP', host: '127.0.0.1', port: 27011, regions: [0, 255] } });
    const server = await t.db.gameServer.create({
      data: { address: '127.0.0.1', ip: '127.0.0.1', queryPort: 27015, sourceId: source.id, keywords: ['a', 'b'], name: 'x' },
    });
    expect(server.status).toBe('UNKNOWN');
    const found = await t.db.gameServer.findMany({ where: { keywords: { hasEvery: ['a'] } } });
    expect(found.map((s) => s.id)).toEqual([server.id]);
  });
});
