/**
 * The operator's routes beside /graphql: /metrics (Prometheus text) and the BullMQ dashboard
 * (bull-board) on /admin/queues, the dashboard behind the API key like the mutations. A browser cannot
 * add a Bearer header to the dashboard's own requests, so HTTP Basic with the API key as the password
 * (any user name) is accepted too, and asked for, so the browser prompts once.
 */
import { createBullBoard } from "@bull-board/api";
import { BullMQAdapter } from "@bull-board/api/bullMQAdapter";
import { ExpressAdapter } from "@bull-board/express";
import type { Queue } from "bullmq";
import type express from "express";
import { asBearer } from "./auth";

export { asBearer };

export interface OperatorRoutesOptions {
  renderMetrics?: () => Promise<{ contentType: string; body: string }>;
  queues?: Queue[];
  /** true when the request carries a valid API key. */
  isAuthorized: (authorization: string | undefined) => boolean;
}

export const DASHBOARD_PATH = "/admin/queues";

export function mountOperatorRoutes(app: express.Express, options: OperatorRoutesOptions): void {
  const { renderMetrics } = options;
  if (renderMetrics) {
    app.get("/metrics", (_req, res, next) => {
      renderMetrics().then(({ contentType, body }) => res.type(contentType).send(body), next);
    });
  }
  if (options.queues && options.queues.length > 0) {
    const adapter = new ExpressAdapter();
    adapter.setBasePath(DASHBOARD_PATH);
    createBullBoard({
      queues: options.queues.map((q) => new BullMQAdapter(q, { readOnlyMode: false })),
      serverAdapter: adapter,
    });
    app.use(
      DASHBOARD_PATH,
      (req, res, next) => {
        if (options.isAuthorized(asBearer(req.headers.authorization))) {
          next();
          return;
        }
        res
          .status(401)
          .set("WWW-Authenticate", 'Basic realm="gsindex queues", charset="UTF-8"')
          .json({
            error:
              "UNAUTHENTICATED: send Authorization: Bearer <API key> (or Basic with the key as password)",
          });
      },
      adapter.getRouter() as express.RequestHandler,
    );
  }
}
