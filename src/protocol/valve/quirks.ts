/**
 * What particular games do differently, in ONE table. Decoders ask this table; they never test an
 * app id themselves. Every entry names the evidence (a capture id in ../shared/captures/a2s).
 */

/**
 * The Ship (app id 2400): A2S_INFO carries three extra bytes (mode, witnesses, duration) before the
 * version string, and A2S_PLAYER appends one deaths + money pair per player after ALL entries
 * (so the count byte must be trusted). Evidence: xpaw-info-theship, gameq-ship-{1,2,3}-info,
 * gameq-ship-{2,3}-players.
 */
const THE_SHIP_APP_IDS: ReadonlySet<number> = new Set([2400]);

/** 'standard', or The Ship's deaths/money trailer. */
export type PlayerLayout = "standard" | "the-ship";

/** How one app deviates from the documented layouts. */
export interface AppQuirks {
  /** Source A2S_INFO has The Ship's mode / witnesses / duration bytes after VAC. */
  infoHasTheShipFields: boolean;
  /** How A2S_PLAYER entries are laid out. */
  playerLayout: PlayerLayout;
}

const NONE: AppQuirks = { infoHasTheShipFields: false, playerLayout: "standard" };
const THE_SHIP: AppQuirks = { infoHasTheShipFields: true, playerLayout: "the-ship" };

/** The quirks of an app id (undefined when the client does not know it: no quirks). */
export function quirksFor(appId: number | undefined): AppQuirks {
  return appId !== undefined && THE_SHIP_APP_IDS.has(appId) ? THE_SHIP : NONE;
}
