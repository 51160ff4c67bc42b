/**
 * A game's or a map's page: players and servers over time (the API's `population` rollups), the top maps
 * (of a game) and the top servers now.
 */
import { useEffect, useMemo, useState } from "preact/hooks";
import { gql } from "./api";
import { Chart, type ChartSeries } from "./chart";
import { AGGREGATE_RANGES, formatNumber, rangeOf } from "./format";
import { RangePicker } from "./server";

interface PopulationPoint {
  at: string;
  playersAvg: number;
  playersPeak: number;
  serversOnline: number;
}

interface AggregateData {
  population: {
    from: string;
    to: string;
    resolution: string;
    bucketSeconds: number;
    points: PopulationPoint[];
  };
  maps?: Array<{ map: string; players: number; servers: number }>;
  games?: Array<{
    appId: number | null;
    folder: string | null;
    name: string | null;
    players: number;
    servers: number;
  }>;
  servers: {
    totalCount: number;
    totalPlayers: number;
    nodes: Array<{
      id: string | number;
      name: string | null;
      address: string;
      queryPort: number;
      map: string | null;
      players: number;
      maxPlayers: number;
    }>;
  };
}

const QUERY = (
  kind: "game" | "map",
) => `query Aggregate($pop: PopulationFilterInput, $filter: ServerFilterInput, ${kind === "game" ? "$appId: Int, $folder: String, " : ""}$from: DateTimeISO!, $to: DateTimeISO!) {
  population(filter: $pop, from: $from, to: $to, resolution: AUTO) {
    from to resolution bucketSeconds
    points { at playersAvg playersPeak serversOnline }
  }
  ${kind === "game" ? "maps(appId: $appId, folder: $folder, first: 10) { map players servers }\n  games(first: 100) { appId folder name players servers }" : ""}
  servers(filter: $filter, first: 10, orderBy: { field: PLAYERS, direction: DESC }) {
    totalCount totalPlayers
    nodes { id name address queryPort map players maxPlayers }
  }
}`;

export function AggregatePage({
  kind,
  value,
  url,
}: {
  kind: "game" | "map";
  value: string;
  url: URL;
}) {
  const range = rangeOf(url.searchParams.get("range"), AGGREGATE_RANGES);
  const [data, setData] = useState<AggregateData | null>(null);
  const [error, setError] = useState<string | null>(null);

  // A game is its app id when it has one, else its folder (older protocols have no app id).
  const isApp = kind === "game" && /^\d+$/.test(value);
  const gameArgs = isApp ? { appId: Number(value) } : { folder: value };

  useEffect(() => {
    const ctrl = new AbortController();
    const to = new Date();
    const from = new Date(to.getTime() - range.seconds * 1000);
    const vars =
      kind === "game"
        ? {
            pop: gameArgs,
            filter: gameArgs,
            ...gameArgs,
            from: from.toISOString(),
            to: to.toISOString(),
          }
        : {
            pop: { map: value },
            filter: { map: value },
            from: from.toISOString(),
            to: to.toISOString(),
          };
    setError(null);
    gql<AggregateData>(QUERY(kind), vars, ctrl.signal).then(setData, (err: unknown) => {
      if (!ctrl.signal.aborted) setError(err instanceof Error ? err.message : String(err));
    });
    return () => ctrl.abort();
  }, [kind, value, range.key]);

  const game =
    kind === "game"
      ? data?.games?.find((g) => (isApp ? String(g.appId) === value : g.folder === value))
      : undefined;
  const title = kind === "game" ? (game?.name ?? (isApp ? `App ${value}` : value)) : value;
  useEffect(() => {
    document.title = `${title} · gsindex`;
  }, [title]);

  const chart = useMemo(() => {
    if (!data) return null;
    const pts = data.population.points;
    const xs = pts.map((p) => Date.parse(p.at) / 1000);
    const players: ChartSeries[] = [
      {
        label: "Players (average)",
        values: pts.map((p) => p.playersAvg),
        colourVar: "--series-1",
        fill: true,
      },
      {
        label: "Players (peak)",
        values: pts.map((p) => p.playersPeak),
        colourVar: "--series-2",
        dash: true,
      },
    ];
    const servers: ChartSeries[] = [
      {
        label: "Servers online",
        values: pts.map((p) => p.serversOnline),
        colourVar: "--series-3",
        fill: true,
      },
    ];
    return {
      xs,
      players,
      servers,
      from: Date.parse(data.population.from) / 1000,
      to: Date.parse(data.population.to) / 1000,
    };
  }, [data]);

  const listHref =
    kind === "game"
      ? isApp
        ? `/?app=${encodeURIComponent(value)}`
        : `/?folder=${encodeURIComponent(value)}`
      : `/?map=${encodeURIComponent(value)}`;
  return (
    <main id="main">
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href="/">Servers</a> / {kind === "game" ? "Game" : "Map"}
      </nav>
      <h1 data-testid="aggregate-title">{title}</h1>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {data && (
        <p class="totals">
          <strong>{formatNumber(data.servers.totalCount)}</strong> servers,{" "}
          <strong>{formatNumber(data.servers.totalPlayers)}</strong> players online ·{" "}
          <a href={listHref}>list them</a>
        </p>
      )}
      <section aria-labelledby="h-pop">
        <div class="section-head">
          <h2 id="h-pop">Players over time</h2>
          <RangePicker current={range.key} url={url} ranges={AGGREGATE_RANGES} />
        </div>
        {!chart ? (
          <p aria-busy="true">Loading…</p>
        ) : chart.xs.length === 0 ? (
          <p class="empty">No population recorded in this range yet.</p>
        ) : (
          <>
            <Chart
              title="Players"
              xs={chart.xs}
              series={chart.players}
              fromSeconds={chart.from}
              toSeconds={chart.to}
            />
            <h2>Servers online</h2>
            <Chart
              title="Servers online"
              xs={chart.xs}
              series={chart.servers}
              fromSeconds={chart.from}
              toSeconds={chart.to}
            />
          </>
        )}
      </section>
      <div class="columns">
        {data?.maps && (
          <section aria-labelledby="h-maps">
            <h2 id="h-maps">Top maps now</h2>
            <RankTable
              head={["Map", "Players", "Servers"]}
              rows={data.maps.map((m) => ({
                key: m.map,
                href: `/maps/${encodeURIComponent(m.map)}`,
                label: m.map,
                values: [m.players, m.servers],
              }))}
            />
          </section>
        )}
        {data && (
          <section aria-labelledby="h-servers">
            <h2 id="h-servers">Top servers now</h2>
            <RankTable
              head={["Server", "Players", kind === "game" ? "Map" : "Slots"]}
              rows={data.servers.nodes.map((s) => ({
                key: String(s.id),
                href: `/servers/${encodeURIComponent(String(s.id))}`,
                label: s.name ?? `${s.address}:${s.queryPort}`,
                values: [s.players, kind === "game" ? (s.map ?? "–") : s.maxPlayers],
              }))}
            />
          </section>
        )}
      </div>
    </main>
  );
}

function RankTable({
  head,
  rows,
}: {
  head: string[];
  rows: Array<{ key: string; href: string; label: string; values: Array<number | string> }>;
}) {
  if (rows.length === 0) return <p class="empty">None right now.</p>;
  const numeric = rows[0]?.values.map((v) => typeof v === "number") ?? [];
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col" class="num">
              #
            </th>
            {head.map((h, i) => (
              <th key={h} scope="col" class={i > 0 && numeric[i - 1] ? "num" : ""}>
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r, i) => (
            <tr key={r.key}>
              <td class="num">{i + 1}</td>
              <td>
                <a href={r.href}>{r.label}</a>
              </td>
              {r.values.map((v, j) => (
                <td key={j} class={typeof v === "number" ? "num" : ""}>
                  {typeof v === "number" ? formatNumber(v) : v}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
