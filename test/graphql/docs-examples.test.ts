/** Every GraphQL example in docs/graphql.md parses and validates against the schema (users paste them). */
import { readFileSync } from "node:fs";
import path from "node:path";
import { parse, validate } from "graphql";
import { buildApiSchema } from "../../src/graphql/schema";

const DOC = readFileSync(path.resolve(__dirname, "..", "..", "docs", "graphql.md"), "utf8");
const EXAMPLES = [...DOC.matchAll(/```graphql\n([\s\S]*?)```/g)].map((m) => m[1] as string);

describe("docs/graphql.md examples", () => {
  it("has the examples the README promises", () => {
    expect(EXAMPLES.length).toBeGreaterThanOrEqual(4);
    expect(DOC).toMatch(/busiest de_dust2 servers/i);
    expect(DOC).toMatch(/a server's last 30 days/i);
    expect(DOC).toMatch(/players of a game over a year/i);
  });

  it.each(EXAMPLES.map((e, k) => [k, e]))(
    "example %i is valid against the schema",
    async (_k, source) => {
      expect(validate(await buildApiSchema(), parse(source))).toEqual([]);
    },
  );
});
