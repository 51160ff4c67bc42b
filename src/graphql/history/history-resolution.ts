/**
 * The resolution argument of every history field. Its own module so the plan (which picks one) and the
 * object types (which report it) both import it without importing each other.
 */
import "reflect-metadata";
import { registerEnumType } from "type-graphql";

export enum HistoryResolution {
  AUTO = "AUTO",
  RAW = "RAW",
  HOUR = "HOUR",
  DAY = "DAY",
}
registerEnumType(HistoryResolution, {
  name: "HistoryResolution",
  description:
    "AUTO picks RAW, HOUR or DAY buckets (several hours or days each when needed) so a series has at most a few hundred points; RAW is one point per crawl, only inside the raw-history window.",
});
