/**
 * Row ids of the tables that grow with crawls (game_server, crawl, crawl_run) are bigint in PostgreSQL
 * (migration 20261124000000_bigint_ids), so Prisma and raw queries return them as bigint. The code,
 * BullMQ job payloads (JSON, which has no bigint) and the API carry them as numbers: ids are drawn one per
 * new server or crawl, so they stay far below 2^53. Convert where a row is read.
 */
export class IdRangeError extends RangeError {
  readonly code = "ID_OUT_OF_RANGE";
  constructor(value: bigint | number) {
    super(`row id ${value} is beyond 2^53 and cannot be carried as a number`);
    this.name = "IdRangeError";
  }
}

export function toId(value: bigint | number): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new IdRangeError(value);
  return n;
}
