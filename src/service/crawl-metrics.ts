/** Crawl metrics from the crawl's own events: addresses listed per source, wall time of finished crawls. */
import type { CrawlEvent } from "../crawler/crawl-jobs";
import type { Db } from "../shared/db";
import type { Metrics } from "../shared/metrics";

export function crawlMetricsRecorder(db: Db, metrics: Metrics): (event: CrawlEvent) => void {
  const lookup = (crawlId: number) =>
    db.crawl.findUnique({
      where: { id: crawlId },
      select: { startedAt: true, finishedAt: true, source: { select: { name: true } } },
    });
  return (event) => {
    if (event.type === "batch") return;
    if (event.type === "skipped") {
      metrics.crawlTicksSkipped.inc({ source: event.sourceName });
      return;
    }
    // A metric is never worth failing a crawl over: lookups that fail are skipped.
    lookup(event.crawlId)
      .then((crawl) => {
        if (!crawl) return;
        if (event.type === "listed")
          metrics.serversListed.inc({ source: crawl.source.name }, event.found);
        else if (crawl.finishedAt)
          metrics.crawlDuration.observe(
            { source: crawl.source.name },
            (crawl.finishedAt.getTime() - crawl.startedAt.getTime()) / 1000,
          );
      })
      .catch(() => undefined);
  };
}
