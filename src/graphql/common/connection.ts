/**
 * Relay connection plumbing shared by every paginated list: PageInfo, and the validation of
 * first/after/last/before into one direction of travel with a page size under the cap.
 */
import "reflect-metadata";
import { Field, ObjectType } from "type-graphql";
import { BadUserInputError } from "../errors";

@ObjectType({ description: "Relay page information.", simpleResolvers: true })
export class PageInfo {
  @Field(() => Boolean)
  hasNextPage!: boolean;

  @Field(() => Boolean)
  hasPreviousPage!: boolean;

  @Field(() => String, { nullable: true })
  startCursor!: string | null;

  @Field(() => String, { nullable: true })
  endCursor!: string | null;
}

export interface PageArgs {
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
}

/** One direction of travel: forward from `after` or backward from `before`, `size` rows. */
export interface PageRequest {
  direction: "forward" | "backward";
  size: number;
  cursor: string | null;
  cursorArgument: "after" | "before";
}

export function toPageRequest(args: PageArgs, defaultSize: number, maxSize: number): PageRequest {
  const { first, after, last, before } = args;
  if (first != null && last != null)
    throw new BadUserInputError("last", "give either first or last, not both");
  if (after != null && before != null)
    throw new BadUserInputError("before", "give either after or before, not both");
  if (last != null && after != null)
    throw new BadUserInputError("after", "after pages forward: use it with first, not last");
  if (first != null && before != null)
    throw new BadUserInputError("before", "before pages backward: use it with last, not first");
  const check = (name: "first" | "last", n: number): number => {
    if (!Number.isInteger(n) || n < 0)
      throw new BadUserInputError(name, "must be a non-negative integer");
    if (n > maxSize)
      throw new BadUserInputError(
        name,
        `page size ${n} is over the maximum of ${maxSize}; page with cursors instead`,
      );
    return n;
  };
  if (last != null || before != null) {
    return {
      direction: "backward",
      size: last != null ? check("last", last) : defaultSize,
      cursor: before ?? null,
      cursorArgument: "before",
    };
  }
  return {
    direction: "forward",
    size: first != null ? check("first", first) : defaultSize,
    cursor: after ?? null,
    cursorArgument: "after",
  };
}
