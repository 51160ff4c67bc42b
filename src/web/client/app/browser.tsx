/**
 * The server browser at /: filters, sorting and keyset paging, all kept in the URL (a reload or a shared
 * link shows the same page), with the live totals (servers, players) for the filter.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { gql } from "./api";
import { countryLabel, formatNumber, hostPort } from "./format";
import { navigate } from "./router";

const PAGE_SIZE = 25;
const REFRESH_MS = 30_000;

const LIST_QUERY = `query Browse($filter: ServerFilterInput, $orderBy: ServerOrderInput, $first: Int, $after: String, $last: Int, $before: String) {
  servers(filter: $filter, orderBy: $orderBy, first: $first, after: $after, last: $last, before: $before) {
    totalCount
    totalPlayers
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    nodes { id name address gamePort queryPort map players bots maxPlayers country passwordProtected appId folder game status pingMs keywords }
  }
}`;

const GAMES_QUERY = `{ games(first: 100) { appId folder name players servers } }`;

interface Row {
  id: string | number;
  name: string | null;
  address: string;
  gamePort: number | null;
  queryPort: number;
  map: string | null;
  players: number;
  bots: number | null;
  maxPlayers: number;
  country: string | null;
  passwordProtected: boolean | null;
  appId: number | null;
  folder: string | null;
  game: string | null;
  status: string;
  pingMs: number | null;
  keywords: string[];
}

interface ListData {
  servers: {
    totalCount: number;
    totalPlayers: number;
    pageInfo: {
      hasNextPage: boolean;
      hasPreviousPage: boolean;
      startCursor: string | null;
      endCursor: string | null;
    };
    nodes: Row[];
  };
}

interface Game {
  appId: number | null;
  folder: string | null;
  name: string | null;
  players: number;
  servers: number;
}

/** URL parameters of the browser; every filter and the page position live here. */
const FILTER_PARAMS = [
  "q",
  "app",
  "folder",
  "map",
  "player",
  "country",
  "tags",
  "notEmpty",
  "notFull",
  "password",
] as const;
const SORTS = [
  { field: "PLAYERS", label: "Players" },
  { field: "NAME", label: "Name" },
  { field: "MAP", label: "Map" },
  { field: "MAX_PLAYERS", label: "Slots" },
  { field: "PING", label: "Ping" },
  { field: "LAST_SEEN", label: "Last seen" },
  { field: "FIRST_SEEN", label: "First seen" },
] as const;
const DESC_BY_DEFAULT = new Set(["PLAYERS", "MAX_PLAYERS", "LAST_SEEN", "FIRST_SEEN"]);

function splitList(v: string | null): string[] {
  return (v ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

export function filterFromParams(p: URLSearchParams): Record<string, unknown> {
  const f: Record<string, unknown> = {};
  const text = (k: string): string | null => {
    const v = p.get(k)?.trim();
    return v ? v : null;
  };
  const q = text("q");
  if (q) f["search"] = q;
  const app = text("app");
  if (app && /^\d+$/.test(app)) f["appId"] = Number(app);
  const folder = text("folder");
  if (folder) f["folder"] = folder;
  const map = text("map");
  if (map) f["map"] = map;
  const player = text("player");
  if (player) f["playerName"] = player;
  const countries = splitList(p.get("country")).map((c) => c.toUpperCase());
  if (countries.length > 0) f["countries"] = countries;
  const tags = splitList(p.get("tags"));
  if (tags.length > 0) f["tagsAll"] = tags;
  if (p.get("notEmpty") === "1") f["notEmpty"] = true;
  if (p.get("notFull") === "1") f["notFull"] = true;
  const password = p.get("password");
  if (password === "yes") f["password"] = true;
  if (password === "no") f["password"] = false;
  return f;
}

function sortOf(p: URLSearchParams): { field: string; direction: "ASC" | "DESC" } {
  const field = SORTS.some((s) => s.field === p.get("sort"))
    ? (p.get("sort") as string)
    : "PLAYERS";
  const dir = p.get("dir");
  const direction =
    dir === "ASC" || dir === "DESC" ? dir : DESC_BY_DEFAULT.has(field) ? "DESC" : "ASC";
  return { field, direction };
}

function withParams(
  current: URLSearchParams,
  changes: Record<string, string | null>,
  keepCursor = false,
): string {
  const next = new URLSearchParams(current);
  for (const [k, v] of Object.entries(changes)) {
    if (v === null || v === "") next.delete(k);
    else next.set(k, v);
  }
  if (!keepCursor) {
    next.delete("after");
    next.delete("before");
  }
  const s = next.toString();
  return s ? `/?${s}` : "/";
}

export function BrowserPage({ url }: { url: URL }) {
  const params = url.searchParams;
  const [data, setData] = useState<ListData["servers"] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [games, setGames] = useState<Game[]>([]);
  const [tick, setTick] = useState(0);
  const key = params.toString();

  useEffect(() => {
    gql<{ games: Game[] }>(GAMES_QUERY).then(
      (d) => setGames(d.games),
      () => setGames([]),
    );
  }, []);

  useEffect(() => {
    const timer = setInterval(() => {
      if (document.visibilityState === "visible") setTick((t) => t + 1);
    }, REFRESH_MS);
    return () => clearInterval(timer);
  }, []);

  useEffect(() => {
    const ctrl = new AbortController();
    setLoading(true);
    const after = params.get("after");
    const before = params.get("before");
    const vars: Record<string, unknown> = {
      filter: filterFromParams(params),
      orderBy: sortOf(params),
    };
    if (before) Object.assign(vars, { last: PAGE_SIZE, before });
    else Object.assign(vars, { first: PAGE_SIZE, after: after || null });
    gql<ListData>(LIST_QUERY, vars, ctrl.signal).then(
      (d) => {
        setData(d.servers);
        setError(null);
        setLoading(false);
      },
      (err: unknown) => {
        if (ctrl.signal.aborted) return;
        setError(err instanceof Error ? err.message : String(err));
        setLoading(false);
      },
    );
    return () => ctrl.abort();
  }, [key, tick]);

  useEffect(() => {
    document.title = "Servers · gsindex";
  }, []);

  const sort = sortOf(params);
  // From the URL as it is when the change lands, not as it was at this render: a text field applies after a
  // pause in typing, and a box ticked during that pause must not be undone by it.
  const setParam = (changes: Record<string, string | null>): void =>
    navigate(withParams(new URLSearchParams(location.search), changes), true);
  const sortBy = (field: string): void => {
    const direction =
      sort.field === field
        ? sort.direction === "ASC"
          ? "DESC"
          : "ASC"
        : DESC_BY_DEFAULT.has(field)
          ? "DESC"
          : "ASC";
    navigate(withParams(params, { sort: field, dir: direction }));
  };

  return (
    <main id="main">
      <h1>Game servers</h1>
      <Filters params={params} games={games} onChange={setParam} />
      <p class="totals" aria-live="polite" data-testid="totals">
        {data ? (
          <>
            <strong data-testid="total-servers">{formatNumber(data.totalCount)}</strong> servers,{" "}
            <strong data-testid="total-players">{formatNumber(data.totalPlayers)}</strong> players
            online
          </>
        ) : (
          "Counting…"
        )}
        {loading && <span class="loading"> · loading</span>}
      </p>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {data && <ServerTable rows={data.nodes} sort={sort} onSort={sortBy} />}
      {data && (
        <nav class="pager" aria-label="Pages">
          <a
            class={`button${data.pageInfo.hasPreviousPage ? "" : " disabled"}`}
            aria-disabled={!data.pageInfo.hasPreviousPage}
            href={
              data.pageInfo.hasPreviousPage && data.pageInfo.startCursor
                ? withParams(params, { before: data.pageInfo.startCursor, after: null }, true)
                : undefined
            }
            rel="prev"
          >
            ← Previous
          </a>
          <a class="button" href={withParams(params, {})} aria-label="First page">
            First
          </a>
          <a
            class={`button${data.pageInfo.hasNextPage ? "" : " disabled"}`}
            aria-disabled={!data.pageInfo.hasNextPage}
            href={
              data.pageInfo.hasNextPage && data.pageInfo.endCursor
                ? withParams(params, { after: data.pageInfo.endCursor, before: null }, true)
                : undefined
            }
            rel="next"
            data-testid="next-page"
          >
            Next →
          </a>
        </nav>
      )}
    </main>
  );
}

function Filters({
  params,
  games,
  onChange,
}: {
  params: URLSearchParams;
  games: Game[];
  onChange: (c: Record<string, string | null>) => void;
}) {
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  // Text fields apply after a short pause in typing; a form submit (Enter) applies at once.
  const typed =
    (name: string) =>
    (e: Event): void => {
      const value = (e.currentTarget as HTMLInputElement).value;
      clearTimeout(timer.current);
      timer.current = setTimeout(() => onChange({ [name]: value.trim() || null }), 400);
    };
  const submit = (e: Event): void => {
    e.preventDefault();
    clearTimeout(timer.current);
    const form = new FormData(e.currentTarget as HTMLFormElement);
    const changes: Record<string, string | null> = {};
    for (const k of FILTER_PARAMS) {
      const v = form.get(k);
      changes[k] = typeof v === "string" && v.trim() !== "" ? v.trim() : null;
    }
    onChange(changes);
  };
  const gameValue = params.get("app") ? `app:${params.get("app")}` : "";
  const text = (name: string, label: string, placeholder: string, hint?: string) => (
    <div class="field">
      <label for={`f-${name}`}>{label}</label>
      <input
        id={`f-${name}`}
        name={name}
        type="search"
        placeholder={placeholder}
        defaultValue={params.get(name) ?? ""}
        onInput={typed(name)}
        aria-describedby={hint ? `f-${name}-hint` : undefined}
        autocomplete="off"
      />
      {hint && (
        <small id={`f-${name}-hint`} class="hint">
          {hint}
        </small>
      )}
    </div>
  );
  return (
    <form
      class="filters"
      role="search"
      aria-label="Filter servers"
      onSubmit={submit}
      key={params.toString() === "" ? "empty" : "set"}
    >
      {text("q", "Name", "Server name contains…")}
      <div class="field">
        <label for="f-app">Game</label>
        <select
          id="f-app"
          name="app"
          value={gameValue.slice(4)}
          onChange={(e) => onChange({ app: (e.currentTarget as HTMLSelectElement).value || null })}
        >
          <option value="">Any game</option>
          {games
            .filter((g) => g.appId !== null)
            .map((g) => (
              <option key={g.appId} value={String(g.appId)}>
                {g.name ?? g.folder ?? `App ${g.appId}`} ({g.appId})
              </option>
            ))}
          {params.get("app") && !games.some((g) => String(g.appId) === params.get("app")) && (
            <option value={params.get("app") ?? ""}>App {params.get("app")}</option>
          )}
        </select>
      </div>
      {text("folder", "Folder", "e.g. cstrike")}
      {text("map", "Map", "de_dust2, de_*, *dust*", "Exact, prefix (de_*) or wildcard (*dust*)")}
      {text("player", "Player", "Player name contains…")}
      {text("country", "Country", "DE, FR", "ISO codes, comma separated")}
      {text("tags", "Tags", "secure, competitive", "All of these, comma separated")}
      <div class="field">
        <label for="f-password">Password</label>
        <select
          id="f-password"
          name="password"
          value={params.get("password") ?? ""}
          onChange={(e) =>
            onChange({ password: (e.currentTarget as HTMLSelectElement).value || null })
          }
        >
          <option value="">Any</option>
          <option value="no">Open</option>
          <option value="yes">Password protected</option>
        </select>
      </div>
      <fieldset class="field checks">
        <legend>Players</legend>
        <label>
          <input
            type="checkbox"
            name="notEmpty"
            value="1"
            checked={params.get("notEmpty") === "1"}
            onChange={(e) =>
              onChange({ notEmpty: (e.currentTarget as HTMLInputElement).checked ? "1" : null })
            }
          />{" "}
          Not empty
        </label>
        <label>
          <input
            type="checkbox"
            name="notFull"
            value="1"
            checked={params.get("notFull") === "1"}
            onChange={(e) =>
              onChange({ notFull: (e.currentTarget as HTMLInputElement).checked ? "1" : null })
            }
          />{" "}
          Not full
        </label>
      </fieldset>
      <div class="field actions">
        <button type="submit">Apply</button>
        <a class="button secondary" href="/">
          Reset
        </a>
      </div>
    </form>
  );
}

function ServerTable({
  rows,
  sort,
  onSort,
}: {
  rows: Row[];
  sort: { field: string; direction: string };
  onSort: (field: string) => void;
}) {
  const header = (field: string | null, label: string, cls = "") => {
    if (!field)
      return (
        <th scope="col" class={cls}>
          {label}
        </th>
      );
    const active = sort.field === field;
    return (
      <th
        scope="col"
        class={cls}
        aria-sort={active ? (sort.direction === "ASC" ? "ascending" : "descending") : "none"}
      >
        <button
          type="button"
          class="sort"
          onClick={() => onSort(field)}
          data-testid={`sort-${field}`}
        >
          {label}
          <span aria-hidden="true">{active ? (sort.direction === "ASC" ? " ▲" : " ▼") : ""}</span>
        </button>
      </th>
    );
  };
  if (rows.length === 0) return <p class="empty">No server matches these filters.</p>;
  return (
    <div class="table-wrap">
      <table class="servers" data-testid="server-table">
        <caption class="visually-hidden">
          Game servers, sorted by {SORTS.find((s) => s.field === sort.field)?.label ?? sort.field}
        </caption>
        <thead>
          <tr>
            {header("NAME", "Server")}
            {header(null, "Game", "wide-only")}
            {header("MAP", "Map")}
            {header("PLAYERS", "Players", "num")}
            {header(null, "Country", "wide-only")}
            {header("PING", "Ping", "num wide-only")}
            {header(null, "Address", "wide-only")}
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => {
            const gameKey = r.appId !== null ? String(r.appId) : r.folder;
            return (
              <tr key={r.id} data-testid="server-row">
                <td class="name">
                  <a href={`/servers/${encodeURIComponent(String(r.id))}`}>
                    {r.name ?? `${r.address}:${r.queryPort}`}
                  </a>
                  {r.passwordProtected && <span class="badge muted">password</span>}
                  {r.status !== "ONLINE" && (
                    <span class="badge muted">{r.status.toLowerCase()}</span>
                  )}
                </td>
                <td class="wide-only">
                  {gameKey ? (
                    <a href={`/games/${encodeURIComponent(gameKey)}`}>
                      {r.game ?? r.folder ?? gameKey}
                    </a>
                  ) : (
                    "–"
                  )}
                </td>
                <td>{r.map ? <a href={`/maps/${encodeURIComponent(r.map)}`}>{r.map}</a> : "–"}</td>
                <td class="num">
                  {r.players}/{r.maxPlayers}
                </td>
                <td class="wide-only">{countryLabel(r.country)}</td>
                <td class="num wide-only">{r.pingMs ?? "–"}</td>
                <td class="wide-only mono">{hostPort(r.address, r.gamePort ?? r.queryPort)}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
