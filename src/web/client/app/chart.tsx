/**
 * A time-series chart (uPlot) with an optional map timeline drawn under it on the same time axis.
 * The chart element carries data-points (points drawn) for tests and a text summary for screen readers.
 */
import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { formatDateTime, formatNumber, mapColours } from "./format";

export interface ChartSeries {
  label: string;
  values: Array<number | null>;
  /** CSS custom property holding the colour, e.g. '--series-1'. */
  colourVar: string;
  fill?: boolean;
  dash?: boolean;
}

export interface MapSpan {
  map: string;
  from: string;
  to: string;
}

interface Props {
  title: string;
  /** Bucket starts, epoch seconds. */
  xs: number[];
  series: ChartSeries[];
  fromSeconds: number;
  toSeconds: number;
  timeline?: MapSpan[];
}

function cssVar(el: Element, name: string, fallback: string): string {
  return getComputedStyle(el).getPropertyValue(name).trim() || fallback;
}

export function Chart({ title, xs, series, fromSeconds, toSeconds, timeline }: Props) {
  const box = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const el = box.current;
    if (!el) return undefined;
    const text = cssVar(el, "--text-muted", "#555");
    const grid = cssVar(el, "--grid", "#ddd");
    const opts: uPlot.Options = {
      width: Math.max(280, el.clientWidth),
      height: el.clientWidth < 500 ? 200 : 260,
      scales: {
        x: { time: true, range: [fromSeconds, toSeconds] },
        y: { range: (_u, _min, max) => [0, Math.max(1, Math.ceil(max * 1.1))] },
      },
      axes: [
        { stroke: text, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid } },
        { stroke: text, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid }, size: 44 },
      ],
      // Axis labels in UTC like the rest of the pages, whatever the browser's time zone.
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"),
      legend: { live: true },
      cursor: { drag: { x: false, y: false } },
      series: [
        {
          label: "Time (UTC)",
          value: (_u, v) => (v === null ? "–" : formatDateTime(new Date(v * 1000).toISOString())),
        },
        ...series.map((s) => {
          const colour = cssVar(el, s.colourVar, "#36c");
          return {
            label: s.label,
            stroke: colour,
            width: 2,
            fill: s.fill ? `color-mix(in srgb, ${colour} 18%, transparent)` : undefined,
            dash: s.dash ? [6, 4] : undefined,
            points: { show: xs.length < 60 },
            value: (_u: uPlot, v: number | null) => formatNumber(v, 1),
          };
        }),
      ],
    };
    // The map timeline under the chart spans the plot area exactly (uPlot's bbox is in canvas pixels).
    const alignTimeline = (u: uPlot): void => {
      const figure = el.parentElement;
      if (!figure) return;
      figure.style.setProperty("--plot-left", `${u.bbox.left / uPlot.pxRatio}px`);
      figure.style.setProperty("--plot-width", `${u.bbox.width / uPlot.pxRatio}px`);
    };
    opts.hooks = { setSize: [alignTimeline], ready: [alignTimeline] };
    const plot = new uPlot(opts, [xs, ...series.map((s) => s.values)] as uPlot.AlignedData, el);
    el.dataset["points"] = String(plot.data[0]?.length ?? 0);
    el.dataset["drawn"] = "1";
    const resize = new ResizeObserver(() =>
      plot.setSize({
        width: Math.max(280, el.clientWidth),
        height: el.clientWidth < 500 ? 200 : 260,
      }),
    );
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
      delete el.dataset["drawn"];
    };
  }, [xs, series, fromSeconds, toSeconds]);

  const peak = series[0] ? Math.max(0, ...series[0].values.map((v) => v ?? 0)) : 0;
  const summary = `${title}: ${xs.length} points from ${formatDateTime(new Date(fromSeconds * 1000).toISOString())} to ${formatDateTime(new Date(toSeconds * 1000).toISOString())}, highest ${formatNumber(peak, 1)}.`;
  return (
    <figure class="chart">
      <div ref={box} class="chart-plot" role="img" aria-label={summary} data-testid="chart" />
      {timeline && timeline.length > 0 && (
        <MapTimeline spans={timeline} fromSeconds={fromSeconds} toSeconds={toSeconds} />
      )}
      <figcaption class="visually-hidden">{summary}</figcaption>
    </figure>
  );
}

/**
 * Spans of one map split by a late crawl (a gap a little longer than the crawl interval) are drawn as one;
 * gaps wider than a sliver of the range (an outage) stay visible.
 */
function bridgeSpans(spans: readonly MapSpan[], rangeSeconds: number): MapSpan[] {
  const maxGapMs = rangeSeconds * 1000 * 0.02;
  const out: MapSpan[] = [];
  for (const s of spans) {
    const last = out[out.length - 1];
    if (last && last.map === s.map && Date.parse(s.from) - Date.parse(last.to) <= maxGapMs)
      last.to = s.to;
    else out.push({ ...s });
  }
  return out;
}

function MapTimeline({
  spans: given,
  fromSeconds,
  toSeconds,
}: {
  spans: MapSpan[];
  fromSeconds: number;
  toSeconds: number;
}) {
  const width = Math.max(1, toSeconds - fromSeconds);
  const spans = bridgeSpans(given, width);
  const pct = (iso: string): number =>
    Math.min(100, Math.max(0, ((Date.parse(iso) / 1000 - fromSeconds) / width) * 100));
  const colours = mapColours(spans.map((s) => s.map));
  const maps = [...colours.keys()];
  const colourOf = (m: string): string => colours.get(m) ?? "gray";
  return (
    <div class="timeline" data-testid="map-timeline">
      <p class="timeline-title" id="timeline-title">
        Maps played
      </p>
      <ol class="timeline-bar" aria-labelledby="timeline-title">
        {spans.map((s) => {
          const left = pct(s.from);
          const right = pct(s.to);
          const label = `${s.map}: ${formatDateTime(s.from)} to ${formatDateTime(s.to)}`;
          return (
            <li
              key={`${s.from}-${s.map}`}
              class="timeline-span"
              title={label}
              style={{
                left: `${left}%`,
                width: `${Math.max(0.3, right - left)}%`,
                background: colourOf(s.map),
              }}
            >
              <span class="visually-hidden">{label}</span>
            </li>
          );
        })}
      </ol>
      <ul class="timeline-legend">
        {maps.slice(0, 12).map((m) => (
          <li key={m}>
            <span class="swatch" style={{ background: colourOf(m) }} aria-hidden="true" />
            <a href={`/maps/${encodeURIComponent(m)}`}>{m}</a>
          </li>
        ))}
        {maps.length > 12 && <li>and {maps.length - 12} more</li>}
      </ul>
    </div>
  );
}
