/** Client-side navigation over the History API: links stay real links (open in a new tab works). */
import { useEffect, useState } from "preact/hooks";

const listeners = new Set<() => void>();

export function navigate(url: string, replace = false): void {
  if (replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
  for (const l of listeners) l();
}

export function useLocation(): URL {
  const [href, setHref] = useState(location.href);
  useEffect(() => {
    const update = (): void => setHref(location.href);
    listeners.add(update);
    window.addEventListener("popstate", update);
    return () => {
      listeners.delete(update);
      window.removeEventListener("popstate", update);
    };
  }, []);
  return new URL(href);
}

/** Same-origin link clicks (without a modifier key) navigate in place. */
export function interceptLinks(root: HTMLElement): void {
  root.addEventListener("click", (e) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey)
      return;
    const a = (e.target as Element).closest("a");
    if (!a || a.target || a.hasAttribute("download")) return;
    const url = new URL(a.href, location.href);
    if (
      url.origin !== location.origin ||
      url.pathname.startsWith("/web/") ||
      url.pathname === "/graphql"
    )
      return;
    e.preventDefault();
    navigate(url.pathname + url.search);
    window.scrollTo(0, 0);
  });
}
