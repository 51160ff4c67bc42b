/**
 * The web router over a folder of stand-in built files: which paths get the app's page, which get the
 * explorer, what goes on to the API, the headers that keep pages from loading anything from elsewhere,
 * and the message when the pages were never built.
 */
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import express from "express";
import { createWebRouter } from "../../src/web/routes";

let dir: string;
let server: http.Server;
let base: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), "gsindex-web-"));
  mkdirSync(path.join(dir, "graphiql"));
  writeFileSync(path.join(dir, "index.html"), "<title>app</title>");
  writeFileSync(path.join(dir, "graphiql.html"), "<title>explorer</title>");
  writeFileSync(path.join(dir, "app.js"), "export {};");
  const app = express();
  app.use("/empty", createWebRouter(path.join(dir, "nothing-built")));
  app.use(createWebRouter(dir));
  app.all("/graphql", (_req, res) => {
    res.json({ api: true });
  });
  server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

const get = (p: string, accept = "text/html"): Promise<Response> =>
  fetch(`${base}${p}`, { headers: { accept } });

describe("web router", () => {
  it.each(["/", "/?map=de_*&after=abc", "/servers/17", "/games/730", "/maps/de_dust2"])(
    "serves the app page on %s with a same-origin-only CSP",
    async (p) => {
      const res = await get(p);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe("<title>app</title>");
      const csp = res.headers.get("content-security-policy") ?? "";
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("connect-src 'self'");
      expect(csp).not.toMatch(/https?:/);
    },
  );

  it("a browser on /graphql gets the explorer; JSON clients, GET with a query and POST reach the API", async () => {
    expect(await (await get("/graphql")).text()).toBe("<title>explorer</title>");
    expect(await (await get("/graphql", "application/json")).json()).toEqual({ api: true });
    expect(await (await get("/graphql?query=%7B__typename%7D")).json()).toEqual({ api: true });
    const post = await fetch(`${base}/graphql`, {
      method: "POST",
      headers: { accept: "text/html", "content-type": "application/json" },
      body: "{}",
    });
    expect(await post.json()).toEqual({ api: true });
  });

  it("serves the built files under /web with their type, and 404 for anything else there", async () => {
    const js = await get("/web/app.js", "*/*");
    expect(js.status).toBe(200);
    expect(js.headers.get("content-type")).toMatch(/javascript/);
    expect(js.headers.get("x-content-type-options")).toBe("nosniff");
    expect((await get("/web/missing.js", "*/*")).status).toBe(404);
    expect((await get("/web/../package.json", "*/*")).status).toBe(404);
  });

  it("says how to build the pages when they are not built", async () => {
    const res = await get("/empty/");
    expect(res.status).toBe(503);
    expect(await res.text()).toMatch(/npm run build/);
  });
});
