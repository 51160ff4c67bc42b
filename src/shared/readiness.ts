/**
 * Readiness of the process's dependencies (PostgreSQL, Redis): each check runs with its own deadline,
 * so a dependency that hangs (a stopped Redis keeps its sockets open and answers nothing) makes the
 * answer "not ready, because of it" within the deadline instead of holding the probe.
 */
export const READINESS_TIMEOUT_MS = 1000;

export type ReadinessCheck = () => Promise<unknown>;

export interface Readiness {
  ready: boolean;
  /** Per dependency: true when it answered in time. */
  results: Record<string, boolean>;
  /** The dependencies that did not answer, with why. */
  failed: Array<{ name: string; reason: string }>;
}

async function runCheck(check: ReadinessCheck, timeoutMs: number): Promise<string | null> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${timeoutMs} ms`), timeoutMs);
  });
  try {
    // A check that hangs is left behind: neither pg nor ioredis can cancel a command in flight.
    return await Promise.race([
      check().then(
        () => null,
        (err: unknown) => (err instanceof Error ? err.message : String(err)),
      ),
      deadline,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export async function checkReadiness(
  checks: Record<string, ReadinessCheck | undefined>,
  timeoutMs = READINESS_TIMEOUT_MS,
): Promise<Readiness> {
  const named = Object.entries(checks).filter(
    (e): e is [string, ReadinessCheck] => e[1] !== undefined,
  );
  const outcomes = await Promise.all(
    named.map(async ([name, check]) => [name, await runCheck(check, timeoutMs)] as const),
  );
  const results: Record<string, boolean> = {};
  const failed: Readiness["failed"] = [];
  for (const [name, reason] of outcomes) {
    results[name] = reason === null;
    if (reason !== null) failed.push({ name, reason });
  }
  return { ready: failed.length === 0, results, failed };
}
