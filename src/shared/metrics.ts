/**
 * Prometheus metrics (prom-client), one registry per process, served on /metrics by the API.
 * The crawler counts query outcomes and crawl durations here; queue depths are read from
 * BullMQ when Prometheus scrapes, so nothing polls Redis between scrapes.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

export interface QueueDepthSource {
  name: string;
  getJobCounts(...types: string[]): Promise<Record<string, number>>;
}

export class Metrics {
  readonly registry = new Registry();

  readonly queryOutcomes = new Counter({
    name: "gsindex_query_outcomes_total",
    help: "Game-server queries by protocol and outcome (ok, or the protocol error code)",
    labelNames: ["protocol", "outcome"] as const,
    registers: [this.registry],
  });

  readonly crawlDuration = new Histogram({
    name: "gsindex_crawl_duration_seconds",
    help: "Wall time of a finished crawl of one master source",
    labelNames: ["source"] as const,
    buckets: [1, 5, 15, 30, 60, 120, 300, 600, 1800],
    registers: [this.registry],
  });

  readonly serversListed = new Counter({
    name: "gsindex_servers_listed_total",
    help: "Addresses returned by master sources",
    labelNames: ["source"] as const,
    registers: [this.registry],
  });

  readonly apiLatency = new Histogram({
    name: "gsindex_api_request_duration_seconds",
    help: "GraphQL request latency",
    labelNames: ["operation"] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });

  // --- crawl reliability (issue 11): ticks skipped, jobs waiting out an outage, jobs given up ---
  readonly crawlTicksSkipped = new Counter({
    name: "gsindex_crawl_ticks_skipped_total",
    help: "Crawl ticks not started because the previous crawl of the source was still running",
    labelNames: ["source"] as const,
    registers: [this.registry],
  });
  // --- end crawl reliability ---

  private readonly queueSources: QueueDepthSource[] = [];

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: "gsindex_" });
    const sources = this.queueSources;
    new Gauge({
      name: "gsindex_queue_jobs",
      help: "BullMQ jobs by queue and state, read at scrape time",
      labelNames: ["queue", "state"] as const,
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const queue of sources) {
          const counts = await queue.getJobCounts(
            "waiting",
            "active",
            "delayed",
            "failed",
            "completed",
            "prioritized",
          );
          for (const [state, count] of Object.entries(counts))
            this.set({ queue: queue.name, state }, count);
        }
      },
    });
  }

  watchQueue(queue: QueueDepthSource): void {
    this.queueSources.push(queue);
  }

  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
