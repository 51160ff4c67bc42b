/** The database client the API is given (one per process, created by src/shared/db.ts). */
import type { PrismaClient } from '../generated/prisma/client';

export type Db = PrismaClient;
export { Prisma } from '../generated/prisma/client';
