/**
 * The management role: gsindex's own JSON-over-TCP management server, where game servers register, and
 * the list source that names it, so the crawl samples what registered here.
 */
import { ManagementServer } from "../management/management-server";
import type { Config } from "../shared/config";
import type { Db } from "../shared/db";
import type { RoleContext, StartedRole } from "./role";

export async function startManagementRole({
  config,
  db,
  logger,
}: RoleContext): Promise<StartedRole> {
  const management = await ManagementServer.start({
    host: config.managementHost,
    port: config.managementPort,
    trustedCidrs: config.managementTrustedCidrs,
    idleTimeoutMs: config.managementIdleTimeoutMs,
    logger: logger.child({ role: "management" }),
  });
  await ensureLocalManagementSource(db, config);
  return { name: "management", stop: () => management.close() };
}

async function ensureLocalManagementSource(db: Db, config: Readonly<Config>): Promise<void> {
  const host =
    config.managementHost === "0.0.0.0" || config.managementHost === "::"
      ? "127.0.0.1"
      : config.managementHost;
  const data = {
    kind: "MANAGEMENT" as const,
    host,
    port: config.managementPort,
    intervalMs: Math.min(config.crawlIntervalMs, 60_000),
  };
  await db.masterSource.upsert({
    where: { name: "local-management" },
    create: { name: "local-management", ...data },
    update: data,
  });
}
