/**
 * The one way a test waits for something another process or socket does: poll, and fail with a message naming
 * what never happened. A loop that just stops when its time is up lets the test go on with a state it never
 * checked, and the failure (if any) then points at the wrong line.
 */

/** What a probe returns while the awaited thing has not happened yet. */
type NotYet = null | undefined | false;

export interface WaitForOptions {
  /** How long to keep polling; generous, since the machine running the tests may be loaded. */
  timeoutMs: number;
  /** Pause between probes. */
  intervalMs?: number;
  /**
   * Treat a probe that throws as "not yet" (a service that is restarting, a database that is down) instead of
   * failing at once; the last error is part of the timeout message.
   */
  retryErrors?: boolean;
  /** Extra context for the timeout message, e.g. the last lines a child process logged. */
  describe?: () => string;
}

/**
 * Calls `probe` until it returns something other than null, undefined or false, and returns that value.
 * Throws `timed out after N ms waiting for <what>` when `timeoutMs` passes first.
 */
export async function waitFor<T>(
  what: string,
  probe: () => T | Promise<T>,
  options: WaitForOptions,
): Promise<Exclude<T, NotYet>> {
  const { timeoutMs, intervalMs = 100, retryErrors = false } = options;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== null && value !== undefined && value !== false)
        return value as Exclude<T, NotYet>;
    } catch (err) {
      if (!retryErrors) throw err;
      lastError = err;
    }
    if (Date.now() >= deadline) {
      const details = [
        lastError === undefined
          ? ""
          : `last error: ${lastError instanceof Error ? lastError.message : String(lastError)}`,
        options.describe?.() ?? "",
      ].filter((d) => d !== "");
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${details.length > 0 ? `\n${details.join("\n")}` : ""}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
