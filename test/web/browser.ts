/**
 * Headless Chromium for the web page tests: Debian's chromium at /usr/bin/chromium (scripts/test.sh
 * installs it when it can), driven by playwright-core with a fresh profile and no background traffic.
 * Where there is no chromium the tests skip with a message, as the tests needing ../shared do.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { chromium, type BrowserContext } from "playwright-core";

export const CHROMIUM_PATH = "/usr/bin/chromium";

/** Where the screenshots go (git-ignored), for a person to review. */
export const SCREENSHOT_DIR = path.resolve(__dirname, "..", "..", "test-output", "web");

export interface TestBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<TestBrowser> {
  const profile = mkdtempSync(path.join(os.tmpdir(), "gsindex-chromium-"));
  // A fresh --user-data-dir: playwright-core takes it as launchPersistentContext's folder (it refuses the flag).
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    viewport: { width: 1280, height: 900 },
    // The rest keep the browser from calling home.
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    timeout: 60_000,
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** `describe` when chromium is installed, else a skipped block that says how to get it. */
export function describeWithChromium(name: string, body: () => void): void {
  if (!existsSync(CHROMIUM_PATH)) {
    describe.skip(`${name} (skipped: no ${CHROMIUM_PATH}; as root: apt-get update && apt-get install -y chromium, or run npm test as root)`, () => {
      it("needs chromium", () => undefined);
    });
    return;
  }
  describe(name, body);
}
