/** The players and rules a simulated server reports, generated from its seed when the spec gives none. */
import type { SimPlayer, SimRule, SimServerSpec } from "./fleet-spec";
import { NAME_PARTS, SIM_GAMES } from "./games";
import { Random, hash32 } from "./random";

const THE_SHIP_APP_ID = 2400;
const NAMELESS_SHARE_BY_APP_ID = new Map(
  SIM_GAMES.map((g) => [g.appId, g.namelessPlayers ?? 0] as const),
);

/** A few players share a common name; the rest are handles of their own. */
const COMMON_NAME_SHARE = 0.03;

function capitalised(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

/**
 * A human player's name as the fleet makes them. Real ones are mostly handles of their own, from any letters
 * (docs/simulator.md, "Player names"): here two words or two to four syllables, with digits, a clan tag or a
 * letter beyond ASCII on some, and a few common names many players share.
 */
export function humanName(random: Random): string {
  if (random.chance(COMMON_NAME_SHARE)) return random.pick(NAME_PARTS.common);
  let name: string;
  let digits: boolean;
  if (random.chance(0.25)) {
    name = `${random.pick(NAME_PARTS.first)}${random.pick(NAME_PARTS.second)}`;
    digits = random.chance(0.8);
  } else {
    const count = random.int(2, 4);
    const syllables = Array.from({ length: count }, () => random.pick(NAME_PARTS.syllables));
    name = random.chance(0.5) ? syllables.join("") : syllables.map(capitalised).join("");
    digits = count === 2 || random.chance(0.3);
  }
  if (digits) name += String(random.int(0, random.chance(0.3) ? 99 : 9999));
  if (random.chance(0.05)) name += random.pick(NAME_PARTS.accents);
  if (random.chance(0.1)) {
    const tag = Array.from({ length: random.int(2, 4) }, () =>
      String.fromCharCode(65 + random.int(0, 25)),
    );
    name = `[${tag.join("")}]${name}`;
  }
  return name;
}

/** Whether this server sends every player's name empty: a share of some games' servers (SimGame.namelessPlayers). */
export function hasNamelessPlayers(spec: SimServerSpec): boolean {
  const share = NAMELESS_SHARE_BY_APP_ID.get(spec.state.appId) ?? 0;
  return share > 0 && hash32(spec.seed ?? 0, 9) / 0x1_0000_0000 < share;
}

export function playersOf(spec: SimServerSpec): SimPlayer[] {
  if (spec.playerList) return spec.playerList;
  const random = new Random(hash32(spec.seed ?? 0, 1));
  const { players, bots, appId } = spec.state;
  const nameless = hasNamelessPlayers(spec);
  const list: SimPlayer[] = [];
  for (let i = 0; i < players; i++) {
    const isBot = i >= players - bots;
    // Drawn on a nameless server too, so that its scores and times are those it would have with names.
    const generated = isBot ? `BOT ${random.pick(NAME_PARTS.second)}${i}` : humanName(random);
    const name = nameless ? "" : generated;
    // float32 on the wire: keep durations exactly representable so every client reads the same number.
    const player: SimPlayer = {
      name,
      score: random.int(-5, 120),
      durationSeconds: Math.fround(random.int(5, 20000) + random.int(0, 3) / 4),
    };
    if (appId === THE_SHIP_APP_ID) {
      player.deaths = random.int(0, 30);
      player.money = random.int(0, 5000);
    }
    list.push(player);
  }
  return list;
}

export function rulesOf(spec: SimServerSpec): SimRule[] {
  if (spec.rules) return spec.rules;
  const random = new Random(hash32(spec.seed ?? 0, 2));
  const rules: SimRule[] = [
    { name: "mp_friendlyfire", value: random.pick(["0", "1"]) },
    { name: "mp_timelimit", value: String(random.pick([20, 30, 45, 60])) },
    { name: "sv_gravity", value: "800" },
    { name: "sv_password", value: spec.state.passwordProtected ? "1" : "0" },
    { name: "sv_cheats", value: "0" },
  ];
  if (spec.state.keywords.includes("bigrules")) {
    // Plugin-heavy servers publish hundreds of cvars: enough to need several split fragments.
    const count = random.int(120, 220);
    for (let i = 0; i < count; i++) {
      rules.push({
        name: `sm_plugin_${i}_setting`,
        value: `${random.pick(["enabled", "disabled", "auto"])} ${"x".repeat(random.int(0, 24))}${random.int(0, 1e6)}`,
      });
    }
  }
  return rules;
}
