/**
 * Stop requests to a foreground command or the service: SIGINT (a terminal's Ctrl-C) or SIGTERM (an
 * orchestrator, `kill`). Every command that runs until stopped listens through here.
 */
export type StopSignal = "SIGINT" | "SIGTERM";

const STOP_SIGNALS: readonly StopSignal[] = ["SIGINT", "SIGTERM"];

/** Calls `onStop` for every SIGINT and SIGTERM until the returned function is called. */
export function onStopSignal(onStop: (signal: StopSignal) => void): () => void {
  const listeners = STOP_SIGNALS.map((signal) => {
    const listener = (): void => onStop(signal);
    process.on(signal, listener);
    return [signal, listener] as const;
  });
  return () => {
    for (const [signal, listener] of listeners) process.off(signal, listener);
  };
}

/** Resolves with the first SIGINT or SIGTERM, and stops listening for either. */
export function waitForStopSignal(): Promise<StopSignal> {
  return new Promise((resolve) => {
    const stopListening = onStopSignal((signal) => {
      stopListening();
      resolve(signal);
    });
  });
}
