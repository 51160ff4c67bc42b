/// <reference lib="dom" />
/**
 * The web pages in a real browser (headless Chromium) against the real API over a seeded database:
 * the offline GraphQL explorer, the server browser (filter, sort, keyset pages that survive a reload,
 * totals), a server page whose chart draws as many points as the API returned, for each range, the game
 * and map pages, and a phone-sized dark page. Nothing may load from outside the API process.
 * Screenshots go to test-output/web for review.
 */
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import type { Page, Response } from "playwright-core";
import { WEB_PUBLIC_DIR } from "../../src/web/routes";
import { createTestDatabase, type TestDatabase } from "../helpers/db";
import { startTestApi, type TestApi } from "../graphql/helpers/api";
import { DAY, seedHistory, seedServers, type SeededIndex } from "../graphql/helpers/seed";
import { describeWithChromium, launchBrowser, SCREENSHOT_DIR, type TestBrowser } from "./browser";

const FLEET = 80;
const WITH_HISTORY = 4;
const HISTORY_DAYS = 32;
const WAIT_MS = 30_000;

describeWithChromium("web pages in headless Chromium", () => {
  let tdb: TestDatabase;
  let api: TestApi;
  let seed: SeededIndex;
  let tb: TestBrowser;
  const outside: string[] = [];

  beforeAll(async () => {
    if (!existsSync(path.join(WEB_PUBLIC_DIR, "index.html")))
      throw new Error(`${WEB_PUBLIC_DIR} is not built: run npm run build first`);
    mkdirSync(SCREENSHOT_DIR, { recursive: true });
    tdb = await createTestDatabase("gsindex_web");
    seed = await seedServers(tdb.db, FLEET);
    const from = new Date(Math.floor(seed.now.getTime() / DAY) * DAY - HISTORY_DAYS * DAY);
    await seedHistory(
      tdb.db,
      seed.crawlId,
      seed.servers.slice(0, WITH_HISTORY).map((s) => ({ i: s.i, id: seed.ids[s.i] as number })),
      from,
      seed.now,
      7,
    );
    api = await startTestApi({ db: tdb.db });
    tb = await launchBrowser();
    // Every request any page makes is recorded: only the API's own origin (and data:/blob:) is allowed.
    tb.context.on("request", (req) => {
      const url = req.url();
      if (
        !url.startsWith(`${api.baseUrl}/`) &&
        !url.startsWith("data:") &&
        !url.startsWith("blob:")
      )
        outside.push(url);
    });
  }, 180_000);

  afterAll(async () => {
    await tb?.close();
    await api?.close();
    await tdb?.drop();
  }, 60_000);

  async function open(pathAndQuery: string): Promise<Page> {
    const page = await tb.context.newPage();
    page.setDefaultTimeout(WAIT_MS);
    const errors: string[] = [];
    page.on("pageerror", (err) => errors.push(err.message));
    await page.goto(`${api.baseUrl}${pathAndQuery}`);
    (page as Page & { jsErrors?: string[] }).jsErrors = errors;
    return page;
  }

  const jsErrors = (page: Page): string[] =>
    (page as Page & { jsErrors?: string[] }).jsErrors ?? [];
  const shot = (page: Page, name: string): Promise<Buffer> =>
    page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });

  async function totals(
    filter: Record<string, unknown>,
  ): Promise<{ totalCount: number; totalPlayers: number }> {
    const res = await api.gql<{ servers: { totalCount: number; totalPlayers: number } }>(
      "query($f: ServerFilterInput) { servers(filter: $f, first: 1) { totalCount totalPlayers } }",
      { f: filter },
    );
    expect(res.errors).toBeUndefined();
    return res.data?.servers as { totalCount: number; totalPlayers: number };
  }

  const rowNames = (page: Page): Promise<string[]> =>
    page.locator("[data-testid=server-row] td.name a").allTextContents();

  /** The page's own GraphQL answer for the operation named `op` (the chart must draw what it got). */
  function graphqlResponse(page: Page, op: string): Promise<Response> {
    return page.waitForResponse(
      (r) =>
        r.url().endsWith("/graphql") &&
        r.request().method() === "POST" &&
        (r.request().postData() ?? "").includes(`query ${op}`),
    );
  }

  it("GET /graphql in a browser is GraphiQL, served locally; POST and GET with a query still reach the API", async () => {
    const html = await fetch(`${api.baseUrl}/graphql`, { headers: { accept: "text/html" } });
    expect(html.status).toBe(200);
    expect(html.headers.get("content-security-policy")).toContain("default-src 'self'");
    expect(await html.text()).toContain("/web/graphiql/graphiql.js");
    const get = await fetch(
      `${api.baseUrl}/graphql?query=${encodeURIComponent("{ servers(first: 1) { totalCount } }")}`,
      { headers: { accept: "application/json", "apollo-require-preflight": "true" } },
    );
    expect(
      ((await get.json()) as { data: { servers: { totalCount: number } } }).data.servers.totalCount,
    ).toBeGreaterThan(0);

    const page = await open("/graphql");
    await page.locator(".graphiql-container").waitFor();
    // The default query runs against this API and its answer shows in the result pane.
    await page.locator(".graphiql-query-editor").getByText("totalPlayers").first().waitFor();
    await page
      .getByRole("button", { name: /execute query/i })
      .first()
      .click();
    await page.locator(".graphiql-response").getByText("totalPlayers").first().waitFor();
    await shot(page, "graphiql");
    expect(jsErrors(page)).toEqual([]);
    await page.close();
  }, 120_000);

  it("the server browser lists, filters, sorts and pages, with totals, and the URL keeps the state", async () => {
    const page = await open("/");
    await page.locator("[data-testid=server-row]").first().waitFor();
    expect(await page.locator("[data-testid=server-row]").count()).toBe(25);
    const all = await totals({});
    await page
      .locator("[data-testid=total-servers]", { hasText: all.totalCount.toLocaleString("en-US") })
      .waitFor();
    expect(await page.getByTestId("total-players").textContent()).toBe(
      all.totalPlayers.toLocaleString("en-US"),
    );
    await shot(page, "browser");

    // Filter: a map prefix and "not empty"; the URL carries both and the totals follow.
    await page.getByLabel("Map", { exact: true }).fill("de_*");
    await page.getByLabel("Not empty").check();
    await page.waitForURL(/map=de_\*/);
    await page.waitForURL(/notEmpty=1/);
    const filtered = await totals({ map: "de_*", notEmpty: true });
    expect(filtered.totalCount).toBeLessThan(all.totalCount);
    await page
      .locator("[data-testid=total-servers]", { hasText: new RegExp(`^${filtered.totalCount}$`) })
      .waitFor();
    const maps = await page.locator("[data-testid=server-row] td:nth-child(3)").allTextContents();
    expect(maps.length).toBeGreaterThan(0);
    for (const m of maps) expect(m).toMatch(/^de_/);

    // Sort by name, then walk to page 2 by keyset cursor; a reload shows the same page.
    await page.goto(`${api.baseUrl}/?sort=NAME&dir=ASC`);
    await page.locator("[data-testid=server-row]").first().waitFor();
    const first = await rowNames(page);
    expect(first).toEqual(
      [...first].sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase())),
    );
    await page.getByTestId("next-page").click();
    await page.waitForURL(/after=/);
    await page.waitForFunction(
      (firstName) =>
        document.querySelector("[data-testid=server-row] td.name a")?.textContent !== firstName,
      first[0],
    );
    const second = await rowNames(page);
    expect(second).toHaveLength(25);
    expect(second.some((n) => first.includes(n))).toBe(false);
    await page.reload();
    await page.locator("[data-testid=server-row]").first().waitFor();
    expect(await rowNames(page)).toEqual(second);
    await shot(page, "browser-page-2");
    expect(jsErrors(page)).toEqual([]);
    await page.close();
  }, 120_000);

  it("a server page draws as many chart points as the API returned, for each range, with players, rules and the map timeline", async () => {
    const id = String(seed.ids[1]);
    const page = await tb.context.newPage();
    page.setDefaultTimeout(WAIT_MS);
    const errors: string[] = [];
    page.on("pageerror", (err) => errors.push(err.message));
    const day = graphqlResponse(page, "Server");
    await page.goto(`${api.baseUrl}/servers/${id}`);
    const dayPoints = (
      (await (await day).json()) as {
        data: { server: { history: { points: unknown[]; resolution: string } } };
      }
    ).data.server.history;
    // 24 h of samples every 20 minutes, read raw: one point per crawl.
    expect(dayPoints.resolution).toBe("RAW");
    expect(dayPoints.points.length).toBeGreaterThanOrEqual(70);
    await page.locator('[data-testid=chart][data-drawn="1"]').waitFor();
    expect(await page.getByTestId("chart").getAttribute("data-points")).toBe(
      String(dayPoints.points.length),
    );
    expect(await page.locator("[data-testid=chart] canvas").count()).toBe(1);
    expect(await page.locator(".timeline-span").count()).toBeGreaterThan(1);
    expect(await page.getByTestId("server-name").textContent()).toBe(seed.servers[1]?.name);
    expect(await page.locator("[data-testid=player-table] tbody tr").count()).toBe(
      seed.servers[1]?.playerNames.length,
    );
    await page.getByText("mp_timelimit").waitFor();
    await page.getByTestId("uptime").getByText("%").waitFor();
    await shot(page, "server-24h");

    for (const [range, resolution] of [
      ["30d", "HOUR"],
      ["1y", "DAY"],
      ["7d", "HOUR"],
      ["1h", "RAW"],
    ] as const) {
      const answer = graphqlResponse(page, "Server");
      await page.getByTestId(`range-${range}`).click();
      await page.waitForURL(new RegExp(`range=${range}`));
      const history = (
        (await (await answer).json()) as {
          data: { server: { history: { points: unknown[]; resolution: string } } };
        }
      ).data.server.history;
      expect(history.resolution).toBe(resolution);
      expect(history.points.length).toBeGreaterThan(0);
      await page.waitForFunction((n) => {
        const el = document.querySelector<HTMLElement>('[data-testid=chart][data-drawn="1"]');
        return el?.dataset["points"] === String(n);
      }, history.points.length);
      await shot(page, `server-${range}`);
    }
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it("game and map pages chart players and servers over time and list the top maps and servers", async () => {
    const game = await open("/games/10?range=30d");
    await game.getByTestId("aggregate-title").getByText("Counter-Strike").waitFor();
    await game.locator('[data-testid=chart][data-drawn="1"]').first().waitFor();
    expect(await game.locator('[data-testid=chart][data-drawn="1"]').count()).toBe(2);
    await game.getByRole("heading", { name: "Top maps now" }).waitFor();
    await game.getByRole("link", { name: "de_dust2" }).first().waitFor();
    await shot(game, "game");
    expect(jsErrors(game)).toEqual([]);
    await game.close();

    const map = await open("/maps/de_dust2?range=7d");
    await map.locator('[data-testid=chart][data-drawn="1"]').first().waitFor();
    await map.getByRole("heading", { name: "Top servers now" }).waitFor();
    await shot(map, "map");
    expect(jsErrors(map)).toEqual([]);
    await map.close();
  }, 120_000);

  it("reads on a phone in dark mode", async () => {
    const page = await tb.context.newPage();
    await page.setViewportSize({ width: 390, height: 844 });
    await page.emulateMedia({ colorScheme: "dark" });
    await page.goto(`${api.baseUrl}/servers/${String(seed.ids[1])}`);
    await page.locator('[data-testid=chart][data-drawn="1"]').waitFor({ timeout: WAIT_MS });
    // Nothing wider than the screen: no sideways scrolling of the page itself.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
      390,
    );
    const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    expect(background).toBe("rgb(16, 20, 24)");
    await shot(page, "server-phone-dark");
    await page.goto(`${api.baseUrl}/`);
    await page.locator("[data-testid=server-row]").first().waitFor({ timeout: WAIT_MS });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
      390,
    );
    await shot(page, "browser-phone-dark");
    await page.close();
  }, 120_000);

  it("no page loaded anything from outside the API process", () => {
    expect(outside).toEqual([]);
  });
});
