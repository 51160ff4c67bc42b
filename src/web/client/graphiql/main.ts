/**
 * The GraphQL explorer on GET /graphql: GraphiQL from its npm package, with its editor's workers served
 * from this process (graphiql/*.worker.js, built by scripts/build-web.js) instead of a CDN.
 */
import { createGraphiQLFetcher } from "@graphiql/toolkit";
import { GraphiQL } from "graphiql";
import "graphiql/style.css";
import { createElement } from "react";
import { createRoot } from "react-dom/client";

const WORKERS: Record<string, string> = { json: "json.worker.js", graphql: "graphql.worker.js" };
const base = new URL("./", import.meta.url);

(globalThis as { MonacoEnvironment?: unknown }).MonacoEnvironment = {
  getWorker(_workerId: string, label: string): Worker {
    return new Worker(new URL(WORKERS[label] ?? "editor.worker.js", base));
  },
};

const DEFAULT_QUERY = `# The busiest servers now. Ctrl-Enter runs the query; the Docs button lists every field.
{
  servers(first: 10, filter: { notEmpty: true }) {
    totalCount
    totalPlayers
    nodes { id name map players maxPlayers country }
  }
}
`;

const fetcher = createGraphiQLFetcher({ url: new URL("/graphql", location.href).toString() });
const container = document.getElementById("graphiql");
if (container)
  createRoot(container).render(createElement(GraphiQL, { fetcher, defaultQuery: DEFAULT_QUERY }));
