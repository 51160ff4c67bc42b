import { readFileSync } from "node:fs";
import path from "node:path";
import { parse } from "yaml";
import { CONFIG_VARIABLES } from "../../src/shared/config";

// No Docker engine runs on these machines, so the compose file is checked for what `docker compose up` needs.
describe("docker-compose.yml", () => {
  const root = path.resolve(__dirname, "..", "..");
  const compose = parse(readFileSync(path.join(root, "docker-compose.yml"), "utf8")) as {
    services: Record<
      string,
      {
        stop_grace_period?: string;
        image?: string;
        build?: unknown;
        healthcheck?: { test: unknown };
        depends_on?: Record<string, { condition: string }>;
        environment?: Record<string, string>;
        ports?: string[];
        volumes?: string[];
      }
    >;
    volumes: Record<string, unknown>;
  };

  it("runs postgres, redis and gsindex, each with a health check", () => {
    expect(Object.keys(compose.services).sort()).toEqual(["gsindex", "postgres", "redis"]);
    for (const service of Object.values(compose.services))
      expect(service.healthcheck?.test).toBeDefined();
  });

  it("starts gsindex only once its services are healthy, and points it at them", () => {
    const gsindex = compose.services.gsindex!;
    expect(gsindex.build).toBe(".");
    expect(gsindex.depends_on).toEqual({
      postgres: { condition: "service_healthy" },
      redis: { condition: "service_healthy" },
    });
    expect(gsindex.environment?.DATABASE_URL).toMatch(/@postgres:5432\//);
    expect(gsindex.environment?.REDIS_URL).toBe("redis://redis:6379");
    expect(gsindex.ports).toContain("4000:4000");
  });

  it("keeps the data in named volumes", () => {
    for (const name of ["postgres", "redis"]) {
      const volume = compose.services[name]!.volumes?.[0]?.split(":")[0];
      expect(volume && volume in compose.volumes).toBe(true);
    }
  });

  it("has a multi-stage Dockerfile that builds what the compose file runs", () => {
    const dockerfile = readFileSync(path.join(root, "Dockerfile"), "utf8");
    expect(dockerfile.match(/^FROM /gm)?.length).toBeGreaterThanOrEqual(2);
    expect(dockerfile).toMatch(/npm run build/);
    expect(dockerfile).toMatch(/EXPOSE 4000/);
  });

  it("sets only variables gsindex reads, and stops it within its grace period", () => {
    const gsindex = compose.services.gsindex!;
    for (const name of Object.keys(gsindex.environment ?? {}))
      expect({ name, read: CONFIG_VARIABLES.includes(name) }).toEqual({ name, read: true });
    const grace = /^(\d+)s$/.exec(gsindex.stop_grace_period ?? "");
    expect(grace).not.toBeNull();
    const stopGraceMs = Number(gsindex.environment?.STOP_GRACE_MS ?? 25_000);
    // The service exits within STOP_GRACE_MS + ~2 s; Docker must not SIGKILL it before.
    expect(Number(grace![1]) * 1000).toBeGreaterThanOrEqual(stopGraceMs + 5000);
  });
});
