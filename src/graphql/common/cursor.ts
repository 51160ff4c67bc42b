/**
 * Opaque keyset cursors. A cursor is base64url(JSON [order, sortValue, id]): the ordering it was made
 * for, the row's sort key and its id (the tiebreak). Decoding checks every part, so a cursor that was
 * tampered with, truncated, or made for another ordering is a BAD_USER_INPUT naming the argument
 * instead of a silently wrong page. Stable: the same row under the same ordering always gives the same
 * cursor, whatever page it was read from. The id is a JSON number: ids are bigint in the database since
 * migration 20261124000000_bigint_ids, which kept their values, so cursors made before it still decode.
 */
import { BadUserInputError } from "../errors";

/** A sort key is a number, a string, or null (rows whose key is unknown sort last). */
export type SortValue = number | string | null;

export interface CursorKey {
  order: string;
  value: SortValue;
  id: number;
}

const MAX_CURSOR_CHARS = 1024;

export function encodeCursor(key: CursorKey): string {
  return Buffer.from(JSON.stringify([key.order, key.value, key.id]), "utf8").toString("base64url");
}

/** Decode a cursor the client sent as `argumentName`, made for `expectedOrder`. */
export function decodeCursor(
  cursor: string,
  expectedOrder: string,
  argumentName: string,
): CursorKey {
  const invalid = (why: string): never => {
    throw new BadUserInputError(
      argumentName,
      `not a valid cursor (${why}); use a cursor from this query's pageInfo or edges`,
    );
  };
  if (cursor.length === 0 || cursor.length > MAX_CURSOR_CHARS || !/^[A-Za-z0-9_-]+$/.test(cursor))
    invalid("malformed");
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    return invalid("malformed");
  }
  if (!Array.isArray(parsed) || parsed.length !== 3) return invalid("malformed");
  const [order, value, id] = parsed as unknown[];
  if (typeof order !== "string") return invalid("malformed");
  if (order !== expectedOrder) return invalid(`made for ordering ${order}, not ${expectedOrder}`);
  if (!(
    value === null ||
    typeof value === "string" ||
    (typeof value === "number" && Number.isFinite(value))
  )) {
    return invalid("malformed sort key");
  }
  if (typeof id !== "number" || !Number.isSafeInteger(id) || id < 0) return invalid("malformed id");
  return { order, value, id };
}
