/**
 * A per-request deadline linked to a long-lived caller signal, without AbortSignal.any/timeout: on Node 20/22
 * AbortSignal.any keeps a link on the caller's signal for every request (nodejs/node#55351), which leaks on a
 * crawler's listing of thousands of pages. The link goes through linkAbort (one listener on the caller's
 * signal however many requests share it). dispose() clears the timer and the link; call it in finally.
 */
import { linkAbort } from "../abort-link";

export interface Deadline {
  signal: AbortSignal;
  /** True when the deadline fired (not the caller). */
  readonly timedOut: boolean;
  dispose(): void;
}

/**
 * @param timeoutReason what the signal aborts with when the deadline fires. @defaultValue the
 *   AbortController default (an AbortError DOMException); the caller's own reason when the caller aborts.
 */
export function startDeadline(
  timeoutMs: number,
  caller: AbortSignal | undefined,
  timeoutReason?: unknown,
): Deadline {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(timeoutReason);
  }, timeoutMs);
  const unlink = linkAbort(caller, () => controller.abort(caller?.reason));
  return {
    signal: controller.signal,
    get timedOut() {
      return timedOut;
    },
    dispose: () => {
      clearTimeout(timer);
      unlink();
    },
  };
}
