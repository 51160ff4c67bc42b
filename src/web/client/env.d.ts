// Stylesheets imported for esbuild to bundle (into the entry's .css file).
declare module "*.css";

// The one react-dom entry the explorer uses (react-dom ships no types of its own).
declare module "react-dom/client" {
  import type { ReactNode } from "react";
  export function createRoot(container: Element): { render(node: ReactNode): void };
}
