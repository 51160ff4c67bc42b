/**
 * A per-request deadline linked to a long-lived caller signal, without AbortSignal.any/timeout: on Node 20/22
 * AbortSignal.any keeps a link on the caller's signal for every request (nodejs/node#55351), which leaks on a
 * crawler's listing of thousands of pages. dispose() clears the timer and the link; call it in finally.
 */
export interface Deadline {
  signal: AbortSignal;
  /** True when the deadline fired (not the caller). */
  readonly timedOut: boolean;
  dispose(): void;
}

export function startDeadline(timeoutMs: number, caller: AbortSignal | undefined): Deadline {
  const controller = new AbortController();
  let timedOut = false;
  const onCallerAbort = (): void => controller.abort(caller?.reason);
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  if (caller?.aborted) onCallerAbort();
  else caller?.addEventListener('abort', onCallerAbort, { once: true });
  return {
    signal: controller.signal,
    get timedOut() {
      return timedOut;
    },
    dispose: () => {
      clearTimeout(timer);
      caller?.removeEventListener('abort', onCallerAbort);
    },
  };
}
