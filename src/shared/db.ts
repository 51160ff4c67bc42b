/** The PrismaClient over node-postgres (@prisma/adapter-pg). One instance per process. */
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '../generated/prisma/client';

export type Db = PrismaClient;
export { PrismaClient };

export function createDb(databaseUrl: string, options: { max?: number } = {}): Db {
  const adapter = new PrismaPg({ connectionString: databaseUrl, max: options.max ?? 10 });
  return new PrismaClient({ adapter });
}
