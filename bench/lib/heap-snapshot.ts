/**
 * Summarises a V8 .heapsnapshot (node --heapsnapshot-signal) into what holds the heap: self size by
 * constructor / kind, largest first, against the process's RSS when it was taken.
 */
import { readFileSync } from "node:fs";
import { num, table } from "./report";

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

export interface HeapSummary {
  totalBytes: number;
  top: Array<{ name: string; bytes: number; count: number }>;
}

export function summariseHeapSnapshot(file: string, topN = 12): HeapSummary {
  const s = JSON.parse(readFileSync(file, "utf8")) as Snapshot;
  const fields = s.snapshot.meta.node_fields;
  const stride = fields.length;
  const typeAt = fields.indexOf("type");
  const nameAt = fields.indexOf("name");
  const sizeAt = fields.indexOf("self_size");
  const types = s.snapshot.meta.node_types[0];
  const by = new Map<string, { bytes: number; count: number }>();
  let total = 0;
  for (let i = 0; i < s.nodes.length; i += stride) {
    const type = types[s.nodes[i + typeAt] as number] ?? "?";
    const size = s.nodes[i + sizeAt] as number;
    total += size;
    // Objects by constructor; strings, code, arrays and the rest by kind.
    const key =
      type === "object" || type === "closure"
        ? `${s.strings[s.nodes[i + nameAt] as number] ?? "?"}${type === "closure" ? " (closure)" : ""}`
        : `(${type})`;
    const e = by.get(key) ?? { bytes: 0, count: 0 };
    e.bytes += size;
    e.count += 1;
    by.set(key, e);
  }
  return {
    totalBytes: total,
    top: [...by]
      .sort((a, b) => b[1].bytes - a[1].bytes)
      .slice(0, topN)
      .map(([name, e]) => ({ name, bytes: e.bytes, count: e.count })),
  };
}

export function heapMarkdown(h: HeapSummary, rssBytes: number, label: string): string {
  const MiB = 1024 * 1024;
  return [
    `Heap snapshot of ${label}: the V8 heap held ${num(h.totalBytes / MiB, 1)} MiB of the process's ${num(rssBytes / MiB, 1)} MiB RSS at that moment; the rest lies outside the V8 heap (Buffer and ArrayBuffer backing stores, the Prisma engine's WebAssembly memory, compiled code, the allocator), which this snapshot does not break down.`,
    "",
    table(
      ["held by", "objects", "self size"],
      h.top.map((t) => [
        `\`${t.name.slice(0, 80)}\``,
        num(t.count),
        `${num(t.bytes / MiB, 1)} MiB`,
      ]),
    ),
  ].join("\n");
}
