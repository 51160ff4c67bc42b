/** The players and rules a simulated server reports, generated from its seed when the spec gives none. */
import type { SimPlayer, SimRule, SimServerSpec } from "./fleet-spec";
import { NAME_PARTS } from "./games";
import { Random, hash32 } from "./random";

const THE_SHIP_APP_ID = 2400;

/** A human player's name as the fleet makes them: two name parts and a number. */
export function humanName(random: Random): string {
  return `${random.pick(NAME_PARTS.first)}${random.pick(NAME_PARTS.second)}${random.int(0, 99)}`;
}

export function playersOf(spec: SimServerSpec): SimPlayer[] {
  if (spec.playerList) return spec.playerList;
  const random = new Random(hash32(spec.seed ?? 0, 1));
  const { players, bots, appId } = spec.state;
  const list: SimPlayer[] = [];
  for (let i = 0; i < players; i++) {
    const isBot = i >= players - bots;
    const name = isBot ? `BOT ${random.pick(NAME_PARTS.second)}${i}` : humanName(random);
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
