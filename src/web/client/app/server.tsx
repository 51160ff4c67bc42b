/**
 * One server: current state, players, rules, the population chart over a chosen range (the API's AUTO
 * resolution) with the map timeline under it, and its status history (online share).
 */
import { useEffect, useMemo, useState } from "preact/hooks";
import { gql, idLiteral } from "./api";
import { Chart, type ChartSeries, type MapSpan } from "./chart";
import {
  countryLabel,
  hostPort,
  formatAgo,
  formatDateTime,
  formatDuration,
  formatNumber,
  formatPercent,
  rangeOf,
  SERVER_RANGES,
  DEFAULT_RANGE,
  type Range,
} from "./format";
import { navigate } from "./router";

interface Player {
  name: string;
  score: number | null;
  durationSeconds: number | null;
}

interface HistoryPoint {
  at: string;
  playersAvg: number;
  playersMax: number | null;
  onlineShare: number;
  samples: number;
  map: string | null;
}

interface ServerData {
  id: string | number;
  name: string | null;
  address: string;
  gamePort: number | null;
  queryPort: number;
  protocol: string;
  game: string | null;
  appId: number | null;
  folder: string | null;
  map: string | null;
  players: number;
  bots: number | null;
  maxPlayers: number;
  status: string;
  country: string | null;
  passwordProtected: boolean | null;
  vacSecured: boolean | null;
  os: string | null;
  version: string | null;
  keywords: string[];
  pingMs: number | null;
  firstSeenAt: string;
  lastAnsweredAt: string | null;
  playerList: Player[];
  rules: Array<{ name: string; value: string }>;
  history: {
    resolution: string;
    bucketSeconds: number;
    from: string;
    to: string;
    points: HistoryPoint[];
    mapTimeline: MapSpan[];
  };
}

function serverQuery(id: string): string {
  return `query Server($from: DateTimeISO!, $to: DateTimeISO!, $resolution: HistoryResolution!) {
  server(id: ${idLiteral(id)}) {
    id name address gamePort queryPort protocol game appId folder map players bots maxPlayers status country
    passwordProtected vacSecured os version keywords pingMs firstSeenAt lastAnsweredAt
    playerList { name score durationSeconds }
    rules { name value }
    history(from: $from, to: $to, resolution: $resolution) {
      resolution bucketSeconds from to
      points { at playersAvg playersMax onlineShare samples map }
      mapTimeline { map from to }
    }
  }
}`;
}

export function ServerPage({ id, url }: { id: string; url: URL }) {
  const range = rangeOf(url.searchParams.get("range"), SERVER_RANGES);
  const [server, setServer] = useState<ServerData | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    const ctrl = new AbortController();
    const to = new Date();
    const from = new Date(to.getTime() - range.seconds * 1000);
    setError(null);
    gql<{ server: ServerData | null }>(
      serverQuery(id),
      { from: from.toISOString(), to: to.toISOString(), resolution: range.resolution },
      ctrl.signal,
    ).then(
      (d) => setServer(d.server),
      (err: unknown) => {
        if (!ctrl.signal.aborted) setError(err instanceof Error ? err.message : String(err));
      },
    );
    return () => ctrl.abort();
  }, [id, range.key]);

  useEffect(() => {
    if (server) document.title = `${server.name ?? server.address} · gsindex`;
  }, [server]);

  const chart = useMemo(() => {
    if (!server) return null;
    const pts = server.history.points;
    const xs = pts.map((p) => Date.parse(p.at) / 1000);
    const series: ChartSeries[] = [
      {
        label: "Players (average)",
        values: pts.map((p) => p.playersAvg),
        colourVar: "--series-1",
        fill: true,
      },
      {
        label: "Players (peak)",
        values: pts.map((p) => p.playersMax),
        colourVar: "--series-2",
        dash: true,
      },
    ];
    return {
      xs,
      series,
      from: Date.parse(server.history.from) / 1000,
      to: Date.parse(server.history.to) / 1000,
    };
  }, [server]);

  if (error) {
    return (
      <main id="main">
        <h1>Server</h1>
        <p class="error" role="alert">
          {error}
        </p>
        <p>
          <a href="/">Back to the server list</a>
        </p>
      </main>
    );
  }
  if (!server || !chart) {
    return (
      <main id="main" aria-busy="true">
        <p>Loading…</p>
      </main>
    );
  }

  const samples = server.history.points.reduce((n, p) => n + p.samples, 0);
  const online = server.history.points.reduce((n, p) => n + p.onlineShare * p.samples, 0);
  const gameKey = server.appId !== null ? String(server.appId) : server.folder;
  const connect = hostPort(server.address, server.gamePort ?? server.queryPort);
  return (
    <main id="main">
      <nav class="crumbs" aria-label="Breadcrumb">
        <a href="/">Servers</a>
        {gameKey && (
          <>
            {" / "}
            <a href={`/games/${encodeURIComponent(gameKey)}`}>{server.game ?? gameKey}</a>
          </>
        )}
      </nav>
      <h1 data-testid="server-name">{server.name ?? connect}</h1>
      <section class="state" aria-label="Current state">
        <dl class="facts">
          <div>
            <dt>Status</dt>
            <dd>
              <span class={`status status-${server.status.toLowerCase()}`}>
                {server.status.toLowerCase()}
              </span>{" "}
              · last seen {formatAgo(server.lastAnsweredAt)}
            </dd>
          </div>
          <div>
            <dt>Players</dt>
            <dd data-testid="server-players">
              {server.players} / {server.maxPlayers}
              {server.bots ? ` (${server.bots} bots)` : ""}
            </dd>
          </div>
          <div>
            <dt>Map</dt>
            <dd>
              {server.map ? (
                <a href={`/maps/${encodeURIComponent(server.map)}`}>{server.map}</a>
              ) : (
                "–"
              )}
            </dd>
          </div>
          <div>
            <dt>Address</dt>
            <dd class="mono">{connect}</dd>
          </div>
          <div>
            <dt>Country</dt>
            <dd>{countryLabel(server.country)}</dd>
          </div>
          <div>
            <dt>Game</dt>
            <dd>{server.game ?? server.folder ?? "–"}</dd>
          </div>
          <div>
            <dt>Password</dt>
            <dd>
              {server.passwordProtected === null ? "–" : server.passwordProtected ? "yes" : "no"}
            </dd>
          </div>
          <div>
            <dt>Ping</dt>
            <dd>{server.pingMs === null ? "–" : `${server.pingMs} ms`}</dd>
          </div>
          <div>
            <dt>First seen</dt>
            <dd>{formatDateTime(server.firstSeenAt)}</dd>
          </div>
          {server.version && (
            <div>
              <dt>Version</dt>
              <dd>{server.version}</dd>
            </div>
          )}
        </dl>
        {server.keywords.length > 0 && (
          <p class="tags" aria-label="Tags">
            {server.keywords.map((k) => (
              <a key={k} class="tag" href={`/?tags=${encodeURIComponent(k)}`}>
                {k}
              </a>
            ))}
          </p>
        )}
      </section>

      <section aria-labelledby="h-population">
        <div class="section-head">
          <h2 id="h-population">Players over time</h2>
          <RangePicker current={range.key} url={url} ranges={SERVER_RANGES} />
        </div>
        {chart.xs.length === 0 ? (
          <p class="empty">No history in this range yet.</p>
        ) : (
          <Chart
            title="Players"
            xs={chart.xs}
            series={chart.series}
            fromSeconds={chart.from}
            toSeconds={chart.to}
            timeline={server.history.mapTimeline}
          />
        )}
        <p class="hint">
          {server.history.points.length} points,{" "}
          {server.history.resolution === "RAW"
            ? "one per crawl"
            : `${formatDuration(server.history.bucketSeconds)} each`}
          .
        </p>
      </section>

      <section aria-labelledby="h-status">
        <h2 id="h-status">Status history</h2>
        <p data-testid="uptime">
          Online in <strong>{samples > 0 ? formatPercent(online / samples) : "–"}</strong> of{" "}
          {formatNumber(samples)} queries over the last {range.label}.
        </p>
        <ol class="uptime-strip" aria-label="Online share per bucket">
          {server.history.points.map((p) => (
            <li
              key={p.at}
              title={`${formatDateTime(p.at)}: online ${formatPercent(p.onlineShare)}`}
              class={p.onlineShare >= 0.99 ? "up" : p.onlineShare > 0 ? "partly" : "down"}
            />
          ))}
        </ol>
      </section>

      <div class="columns">
        <section aria-labelledby="h-players">
          <h2 id="h-players">Players now ({server.playerList.length})</h2>
          {server.playerList.length === 0 ? (
            <p class="empty">Nobody is playing.</p>
          ) : (
            <div class="table-wrap scroll-box" tabIndex={0} role="region" aria-label="Players now">
              <table data-testid="player-table">
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col" class="num">
                      Score
                    </th>
                    <th scope="col" class="num">
                      Time
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {[...server.playerList]
                    .sort((a, b) => (b.score ?? 0) - (a.score ?? 0))
                    .map((p, i) => (
                      <tr key={i}>
                        <td>{p.name || <em>(unnamed)</em>}</td>
                        <td class="num">{p.score ?? "–"}</td>
                        <td class="num">{formatDuration(p.durationSeconds)}</td>
                      </tr>
                    ))}
                </tbody>
              </table>
            </div>
          )}
        </section>
        <section aria-labelledby="h-rules">
          <h2 id="h-rules">Rules ({server.rules.length})</h2>
          {server.rules.length === 0 ? (
            <p class="empty">The server sent no rules.</p>
          ) : (
            <details open={server.rules.length <= 15}>
              <summary>Show {server.rules.length} rules</summary>
              <div class="table-wrap scroll-box" tabIndex={0} role="region" aria-label="Rules">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Rule</th>
                      <th scope="col">Value</th>
                    </tr>
                  </thead>
                  <tbody>
                    {server.rules.map((r) => (
                      <tr key={r.name}>
                        <td class="mono">{r.name}</td>
                        <td class="mono">{r.value}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            </details>
          )}
        </section>
      </div>
    </main>
  );
}

export function RangePicker({
  current,
  url,
  ranges,
}: {
  current: string;
  url: URL;
  ranges: readonly Range[];
}) {
  return (
    <div class="range" role="group" aria-label="Time range">
      {ranges.map((r) => {
        const next = new URLSearchParams(url.searchParams);
        if (r.key === DEFAULT_RANGE) next.delete("range");
        else next.set("range", r.key);
        const href = url.pathname + (next.toString() ? `?${next.toString()}` : "");
        return (
          <a
            key={r.key}
            href={href}
            class={`button${r.key === current ? " active" : ""}`}
            aria-current={r.key === current ? "true" : undefined}
            data-testid={`range-${r.key}`}
            onClick={(e) => {
              e.preventDefault();
              navigate(href, true);
            }}
          >
            {r.label}
          </a>
        );
      })}
    </div>
  );
}
