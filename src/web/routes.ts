/**
 * The web pages, served by the API process from the files scripts/build-web.js wrote into
 * dist/web/public: the server browser (/, /servers/:id, /games/..., /maps/...) and the GraphQL explorer
 * on GET /graphql for a browser. Every page uses the public GraphQL API only, and a Content-Security-Policy
 * keeps it from loading anything from outside this process.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import express from "express";

/** The built files: two folders up from src/web (ts-jest) and dist/web (compiled) alike. */
export const WEB_PUBLIC_DIR = path.resolve(__dirname, "..", "..", "dist", "web", "public");

// Monaco (GraphiQL's editor) and uPlot set inline styles, and Monaco starts its workers from blob: URLs.
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "frame-ancestors 'self'",
  "base-uri 'none'",
  "form-action 'self'",
].join("; ");

/** The client-side routes of the app's single page. */
const APP_PATHS = ["/", "/servers/:id", "/games/:key", "/maps/:map"];

function wantsHtml(req: express.Request): boolean {
  return (
    req.accepts(["application/json", "application/graphql-response+json", "text/html"]) ===
    "text/html"
  );
}

export function createWebRouter(publicDir: string = WEB_PUBLIC_DIR): express.Router {
  const router = express.Router();
  const built = (): boolean => existsSync(path.join(publicDir, "index.html"));

  const sendPage =
    (file: string) =>
    (_req: express.Request, res: express.Response): void => {
      if (!built()) {
        res
          .status(503)
          .type("text/plain")
          .send(
            "The web pages are not built: run `npm run build`. The API answers POST /graphql.\n",
          );
        return;
      }
      res.setHeader("Content-Security-Policy", CSP);
      res.setHeader("X-Content-Type-Options", "nosniff");
      res.setHeader("Referrer-Policy", "same-origin");
      res.setHeader("Cache-Control", "no-cache");
      res.sendFile(path.join(publicDir, file));
    };

  // A browser opening /graphql gets the explorer; a GET with a query (or any POST) goes on to Apollo.
  router.get("/graphql", (req, res, next) => {
    if (req.query["query"] !== undefined || !wantsHtml(req)) {
      next();
      return;
    }
    sendPage("graphiql.html")(req, res);
  });
  for (const p of APP_PATHS) router.get(p, sendPage("index.html"));
  router.use(
    "/web",
    express.static(publicDir, {
      index: false,
      fallthrough: false,
      setHeaders(res) {
        res.setHeader("X-Content-Type-Options", "nosniff");
        res.setHeader("Cache-Control", "no-cache");
      },
    }),
  );
  return router;
}
