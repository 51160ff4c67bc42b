/**
 * One 'abort' listener per long-lived signal, however many queries hang off it. A crawler runs hundreds
 * of queries at once under one batch or shutdown signal; a listener each (even one removed when its query
 * settles) trips Node's MaxListenersExceededWarning at 11 in flight and makes every removal O(n), and
 * AbortSignal.any keeps a link per query on the long-lived signal (nodejs/node#55351). Here the signal
 * carries a single listener that fans out to the work in flight, removed with the last of it.
 */
type Callback = () => void;

interface FanOut {
  callbacks: Set<Callback>;
  listener: Callback;
}

const fanOuts = new WeakMap<AbortSignal, FanOut>();

function fanOutOf(signal: AbortSignal): FanOut {
  const existing = fanOuts.get(signal);
  if (existing) return existing;
  const callbacks = new Set<Callback>();
  const listener = (): void => {
    fanOuts.delete(signal);
    for (const callback of [...callbacks]) callback();
  };
  const created = { callbacks, listener };
  fanOuts.set(signal, created);
  signal.addEventListener("abort", listener, { once: true });
  return created;
}

/**
 * Calls `onAbort` once when `signal` aborts (at once, synchronously, when it already has). Returns the
 * unlink to call when the work settles: after it `onAbort` is not called. No signal: nothing to link.
 */
export function linkAbort(signal: AbortSignal | undefined, onAbort: Callback): () => void {
  if (!signal) return () => undefined;
  if (signal.aborted) {
    onAbort();
    return () => undefined;
  }
  const fanOut = fanOutOf(signal);
  // A wrapper per link: the same function linked twice is two links, each with its own unlink.
  const entry: Callback = () => onAbort();
  fanOut.callbacks.add(entry);
  return () => {
    if (
      !fanOut.callbacks.delete(entry) ||
      fanOut.callbacks.size > 0 ||
      fanOuts.get(signal) !== fanOut
    )
      return;
    fanOuts.delete(signal);
    signal.removeEventListener("abort", fanOut.listener);
  };
}
