import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { printApiSchema } from "../../src/graphql/schema";

const SCHEMA_FILE = path.resolve(__dirname, "..", "..", "schema.graphql");

describe("schema.graphql", () => {
  it("matches the schema the code builds (regenerate: UPDATE_SCHEMA=1 npx jest test/graphql/schema.test.ts)", async () => {
    const sdl = await printApiSchema();
    if (process.env.UPDATE_SCHEMA === "1") writeFileSync(SCHEMA_FILE, sdl);
    expect(sdl).toBe(readFileSync(SCHEMA_FILE, "utf8"));
  });
});
