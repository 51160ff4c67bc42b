/**
 * Stop requests to a foreground command or the service: SIGINT (a terminal's Ctrl-C) or SIGTERM (an
 * orchestrator, `kill`). Every command that runs until stopped listens through here.
 */
export type StopSignal = "SIGINT" | "SIGTERM";

const STOP_SIGNALS: readonly StopSignal[] = ["SIGINT", "SIGTERM"];

/**
 * Signals this close to the first are the same stop request delivered twice: a terminal's Ctrl-C goes to
 * the whole process group, and npm and scripts/with-services.js forward it again.
 */
export const REPEATED_SIGNAL_MS = 1000;

/** Calls `onStop` for every SIGINT and SIGTERM until the returned function is called. */
function onStopSignal(onStop: (signal: StopSignal) => void): () => void {
  const listeners = STOP_SIGNALS.map((signal) => {
    const listener = (): void => onStop(signal);
    process.on(signal, listener);
    return [signal, listener] as const;
  });
  return () => {
    for (const [signal, listener] of listeners) process.off(signal, listener);
  };
}

export interface StopSignalOptions {
  /**
   * A later stop request while the stop runs: "now". Default: exit 1 at once. Called for each such
   * signal; the process keeps listening until it exits.
   */
  onRepeat?: (signal: StopSignal) => void;
}

/**
 * Calls `onStop` with the first SIGINT or SIGTERM and keeps listening until the returned function is
 * called. Removing the listener at the first signal would leave an instant with none, and a duplicate
 * arriving then (see REPEATED_SIGNAL_MS) would kill the process by the signal's default action mid-stop.
 * Duplicates are ignored; a later signal calls `onRepeat`.
 */
export function onFirstStopSignal(
  onStop: (signal: StopSignal) => void,
  options: StopSignalOptions = {},
): () => void {
  const onRepeat =
    options.onRepeat ??
    ((): void => {
      process.exit(1);
    });
  let firstAtMs: number | null = null;
  return onStopSignal((signal) => {
    if (firstAtMs === null) {
      firstAtMs = Date.now();
      onStop(signal);
    } else if (Date.now() - firstAtMs >= REPEATED_SIGNAL_MS) {
      onRepeat(signal);
    }
  });
}

/** Resolves with the first SIGINT or SIGTERM (see onFirstStopSignal) and listens until the process exits. */
export function waitForStopSignal(options: StopSignalOptions = {}): Promise<StopSignal> {
  return new Promise((resolve) => {
    onFirstStopSignal(resolve, options);
  });
}
