/**
 * A listing written while it goes on: the servers a source hands over page by page (a Valve master) are
 * written every `partRows`, their batches planned and handed on to be queried, so what a listing holds is
 * bounded by that, not by its split (a Valve region of 90,000 servers; nine regions listed at once), and
 * its first servers are queried while its last are still being listed.
 */
import type { ListedPageSink, ListedServer } from "./list-source";
import type { ListingRow, ListingWriteResult } from "./store/server-store";

/** The run or its crawl was closed while the listing went on: it stops, and its end finds out why. */
export class ListingClosedError extends Error {
  constructor() {
    super("the listing's run or crawl was closed while it was being listed");
    this.name = "ListingClosedError";
  }
}

export interface ListingPartsOptions {
  /** A listed server as a row to write, or null when it is not one (a port out of range). */
  rowOf: (server: ListedServer) => ListingRow | null;
  /** Writes a part (recordListingPart). */
  write: (rows: ListingRow[]) => Promise<ListingWriteResult>;
  /** Hands the part's new batches on to be queried. */
  handOn: (batchKeys: string[]) => Promise<void>;
  /** Rows written in a part; a page's rows beyond it wait for the next part. */
  partRows: number;
}

export class ListingParts {
  private held: ListingRow[] = [];
  private failure: unknown = undefined;
  /** Servers the parts written so far held. */
  written = 0;

  constructor(private readonly options: ListingPartsOptions) {}

  /** What the source hands its pages to. A failed write fails every page after it: the listing stops. */
  readonly sink: ListedPageSink = async (servers) => {
    if (this.failure !== undefined) throw this.failure;
    this.add(servers);
    while (this.held.length >= this.options.partRows) await this.writePart();
  };

  /** Servers a source returned at its end rather than handing over (every source that does not page). */
  add(servers: readonly ListedServer[]): void {
    for (const server of servers) {
      const row = this.options.rowOf(server);
      if (row) this.held.push(row);
    }
  }

  /** The rows not written yet, for the listing's last write; the parts no longer hold them. */
  takeRest(): ListingRow[] {
    const rest = this.held;
    this.held = [];
    return rest;
  }

  /**
   * Why a part could not be written, if one could not: a failure (PostgreSQL, Redis) the job must throw so
   * that it is retried, not record as the listing stopping short. A ListingClosedError is not one.
   */
  failed(): unknown {
    return this.failure instanceof ListingClosedError ? undefined : this.failure;
  }

  /** The first `partRows` held, no more: a part the store writes as one chunk (LISTING_CHUNK_ROWS). */
  private async writePart(): Promise<void> {
    const rows = this.held.splice(0, this.options.partRows);
    try {
      const part = await this.options.write(rows);
      if (part.alreadyDone) throw new ListingClosedError();
      this.written += part.found;
      await this.options.handOn(part.batchKeys);
    } catch (err) {
      this.failure = err;
      throw err;
    }
  }
}
