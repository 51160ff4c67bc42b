/** The PrismaClient over node-postgres (@prisma/adapter-pg). One instance per process. */
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "../generated/prisma/client";

export type Db = PrismaClient;
export { PrismaClient };

export function createDb(databaseUrl: string, options: { max?: number } = {}): Db {
  // History is bucketed by UTC day and hour in SQL (timestamptz → date casts): pin the session to UTC
  // whatever the server's or database's default time zone.
  const adapter = new PrismaPg({
    connectionString: databaseUrl,
    max: options.max ?? 10,
    options: "-c TimeZone=UTC",
  });
  return new PrismaClient({ adapter });
}
