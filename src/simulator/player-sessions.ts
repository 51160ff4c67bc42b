/**
 * Players who leave and others who take their place, as on a real server: each human player's slot holds a
 * run of sessions, each one as long as a draw from the session-length distribution docs/simulator.md gives
 * (a Weibull of shape 0.5 and scale 20 minutes: most sessions short, a long tail, 40 minutes on average).
 * Bots never leave. Everything follows from the server's seed and its age, so every process and every
 * client sees the same players at the same age.
 */
import type { SimPlayer } from "./fleet-spec";
import { humanName } from "./content";
import { Random, hash32 } from "./random";

const SESSION_SHAPE = 0.5;
const SESSION_SCALE_SECONDS = 1200;
/** A session shorter than a connect and a map load does not show in any query; it also keeps each step finite. */
const MIN_SESSION_SECONDS = 10;

/** The length of one session, from a uniform draw in [0, 1): the Weibull's inverse distribution function. */
export function sessionSeconds(uniform: number): number {
  const seconds = SESSION_SCALE_SECONDS * Math.pow(-Math.log1p(-uniform), 1 / SESSION_SHAPE);
  return Math.max(MIN_SESSION_SECONDS, Math.round(seconds));
}

/**
 * What is left, at the server's start, of a session already under way there: a server that has been running
 * is more likely to hold a long session than a new one (its sessions are length-biased), so the rest of one
 * is not a session's draw. For this Weibull the length-biased session is the scale times the square of a
 * Gamma(3, 1) draw (the sum of three exponential ones), and what is left of it a uniform share of that.
 */
export function sessionLeftSeconds(u1: number, u2: number, u3: number, u4: number): number {
  const gamma3 = -(Math.log1p(-u1) + Math.log1p(-u2) + Math.log1p(-u3));
  return Math.max(1, Math.round(SESSION_SCALE_SECONDS * gamma3 * gamma3 * u4));
}

interface Slot {
  /** 0: the spec's own player, whose session was already under way when the server started. */
  generation: number;
  /** Server age (s) at which the slot's current player joined; 0 for generation 0. */
  joinedAtSeconds: number;
  /** Server age (s) at which the current player leaves. */
  leavesAtSeconds: number;
}

export class PlayerSessions {
  private slots: Slot[] = [];

  /** `players`: the spec's list (playersOf); `bots`: how many at its end are bots. */
  constructor(
    private readonly seed: number,
    private readonly players: readonly SimPlayer[],
    private readonly bots: number,
  ) {
    this.reset();
  }

  /**
   * The players in the server at `ageSeconds` (whole seconds since it started). Slots step forward from the
   * last age asked; an earlier age starts them over, so the answer depends on the age alone.
   */
  at(ageSeconds: number): SimPlayer[] {
    if (this.slots.some((s) => s.joinedAtSeconds > ageSeconds)) this.reset();
    const humans = this.players.length - this.bots;
    return this.players.map((player, index) => {
      if (index < humans) {
        const slot = this.advance(index, ageSeconds);
        if (slot.generation > 0) return this.newcomer(index, slot, ageSeconds, player);
      }
      // A bot, or the spec's own player still there: their time runs on.
      return { ...player, durationSeconds: player.durationSeconds + ageSeconds };
    });
  }

  private reset(): void {
    this.slots = this.players.map((_p, index) => ({
      generation: 0,
      joinedAtSeconds: 0,
      leavesAtSeconds: sessionLeftSeconds(
        this.uniform(index, 0, 0),
        this.uniform(index, 0, 1),
        this.uniform(index, 0, 2),
        this.uniform(index, 0, 3),
      ),
    }));
  }

  private advance(index: number, ageSeconds: number): Slot {
    const slot = this.slots[index] as Slot;
    while (slot.leavesAtSeconds <= ageSeconds) {
      slot.generation += 1;
      slot.joinedAtSeconds = slot.leavesAtSeconds;
      slot.leavesAtSeconds += sessionSeconds(this.uniform(index, slot.generation));
    }
    return slot;
  }

  private uniform(index: number, generation: number, draw = 0): number {
    return hash32(this.seed, 7, index, generation, draw) / 0x1_0000_0000;
  }

  private newcomer(index: number, slot: Slot, ageSeconds: number, was: SimPlayer): SimPlayer {
    const random = new Random(hash32(this.seed, 8, index, slot.generation));
    const player: SimPlayer = {
      // A server whose players are nameless (SimGame.namelessPlayers) sends its newcomers' names empty too.
      name: was.name === "" ? "" : humanName(random),
      score: random.int(0, 40),
      durationSeconds: ageSeconds - slot.joinedAtSeconds,
    };
    if (was.deaths !== undefined) {
      player.deaths = random.int(0, 10);
      player.money = random.int(0, 5000);
    }
    return player;
  }
}
