/**
 * The executable schema: every resolver class, no class-validator (inputs are validated where they are
 * used, so each error can name its argument). `printApiSchema` gives the SDL committed as
 * /schema.graphql (written by `gsindex schema`, checked by test/graphql/schema.test.ts).
 */
import "reflect-metadata";
import { lexicographicSortSchema, printSchema, type GraphQLSchema } from "graphql";
import { buildSchema } from "type-graphql";
import { AdminResolver } from "./admin/admin.resolver";
import { CatalogResolver } from "./catalog/catalog.resolver";
import { GameServerResolver, ServerConnectionResolver } from "./game-server/game-server.resolver";
import { PopulationResolver, ServerHistoryResolver } from "./history/history.resolver";
import { CrawlResolver, SourceResolver } from "./source/source.resolver";

let built: Promise<GraphQLSchema> | undefined;

/** Built once per process: type-graphql's metadata is global, and the schema is immutable. */
export function buildApiSchema(): Promise<GraphQLSchema> {
  built ??= buildSchema({
    resolvers: [
      GameServerResolver,
      ServerConnectionResolver,
      ServerHistoryResolver,
      PopulationResolver,
      CatalogResolver,
      SourceResolver,
      CrawlResolver,
      AdminResolver,
    ],
    validate: false,
  });
  return built;
}

/** The SDL as committed in /schema.graphql: sorted, so that only real changes show in a diff. */
export async function printApiSchema(): Promise<string> {
  return `${printSchema(lexicographicSortSchema(await buildApiSchema()))}\n`;
}
