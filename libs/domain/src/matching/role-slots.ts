/**
 * Role slots (mode shapes, issue 34): each team needs, per role, so many players who can play it,
 * one role each. Whether a team's players fill its slots is a bipartite matching (players to
 * slots), solved by augmenting paths: teams are small, so this is cheap.
 */
import { optionalInMs, ruleApplies, setAttributeOf } from './attribute-rules';
import type { RoleRule } from './attribute-types';
import type { MatchCandidate } from './match-candidate';
import type { ModeRules } from './mode-rules';
import type { UnmatchedReason } from './unmatched-reason';

/** The mode's role rule (at most one), when it applies to an anchor that waited `waitedMs`. */
export function roleRuleAt(rules: ModeRules, waitedMs: number): RoleRule | undefined {
  const rule = roleRuleOf(rules);
  return rule && ruleApplies(rule, waitedMs) ? rule : undefined;
}

/** The mode's role rule (at most one), whatever the wait. */
export function roleRuleOf(rules: ModeRules): RoleRule | undefined {
  return (rules.attributeRules ?? []).find((r): r is RoleRule => r.kind === 'roles');
}

/** One team's slots: each role of `perTeam` as many times as it asks, in declared order. */
export function slotsOf(rule: RoleRule): string[] {
  return Object.entries(rule.perTeam).flatMap(([role, count]) =>
    new Array<string>(count).fill(role),
  );
}

/** The roles `candidate` can play under `rule` (its set attribute; none when absent). */
export function rolesOf(candidate: MatchCandidate, rule: RoleRule): readonly string[] {
  return setAttributeOf(candidate.attributes, rule.attribute) ?? [];
}

/** How many of `slots` stay empty at best when each player takes at most one slot it can play. */
export function unfilledSlots(
  players: readonly (readonly string[])[],
  slots: readonly string[],
): number {
  return openSlots(players, slots).length;
}

/**
 * The slots `players` leave empty under a largest assignment (each player one slot it can play):
 * what players added to the team must cover (backfill).
 */
export function openSlots(
  players: readonly (readonly string[])[],
  slots: readonly string[],
): string[] {
  const holder = new Array<number>(slots.length).fill(-1);
  const tryPlace = (player: number, seen: boolean[]): boolean => {
    const roles = players[player] ?? [];
    for (let slot = 0; slot < slots.length; slot++) {
      if (seen[slot] || !roles.includes(slots[slot] ?? '')) continue;
      seen[slot] = true;
      const current = holder[slot] ?? -1;
      if (current < 0 || tryPlace(current, seen)) {
        holder[slot] = player;
        return true;
      }
    }
    return false;
  };
  for (let player = 0; player < players.length; player++) {
    tryPlace(player, new Array<boolean>(slots.length).fill(false));
  }
  return slots.filter((_, slot) => (holder[slot] ?? -1) < 0);
}

/**
 * Teams filling up as groups are added, each team keeping room for the slots it has not filled:
 * a group goes whole into a team that has room for it and, after it, still room for the team's
 * empty slots; among those, the team whose empty slots it fills most, then the least room (best
 * fit), then the lowest index. So a search that takes partners oldest first passes over a player
 * who plays no missing role once the room left is needed for those roles.
 *
 * Each team keeps a largest assignment of its players to its slots, grown by one augmenting path
 * per player who joins (Kuhn's algorithm: growing a largest assignment that way keeps it
 * largest), so asking about a group costs a path per member, not a solve of the whole team.
 */
export class RolePacking {
  private readonly free: number[];
  private readonly players: (readonly string[])[][];
  /** Per team, per slot: the index in the team of the player holding it, or -1. */
  private readonly holders: number[][];
  /** Each team's slots its players leave empty now. */
  private readonly open: number[];
  /** Scratch for {@link gain}: a team's holders as they would be with the group. */
  private readonly trial: number[];

  constructor(
    sizes: readonly number[],
    private readonly slots: readonly string[],
  ) {
    this.free = [...sizes];
    this.players = sizes.map(() => []);
    this.holders = sizes.map(() => new Array<number>(slots.length).fill(-1));
    this.open = sizes.map(() => slots.length);
    this.trial = new Array<number>(slots.length).fill(-1);
  }

  /**
   * Asked of every partner a search looks at, so it solves the assignment only where it must:
   * players who join never empty a filled slot, so a team with room for the group and, after it,
   * for every slot now empty takes it whatever roles it plays.
   */
  fits(group: readonly (readonly string[])[]): boolean {
    const plays = this.playsASlot(group);
    for (let team = 0; team < this.free.length; team++) {
      const left = (this.free[team] ?? 0) - group.length;
      if (left < 0) continue;
      const open = this.open[team] ?? 0;
      if (left >= open) return true;
      if (plays && left >= open - this.gain(team, group, false)) return true;
    }
    return false;
  }

  /** Adds `group` (it must fit) and answers its team. */
  add(group: readonly (readonly string[])[]): number {
    const team = this.teamFor(group);
    if (team >= 0) {
      this.free[team] = (this.free[team] ?? 0) - group.length;
      this.open[team] = (this.open[team] ?? 0) - this.gain(team, group, true);
    }
    return team;
  }

  /** The empty slots of every team: as many more players who play a slot role it still needs. */
  get openSlots(): number {
    return this.open.reduce((total, open) => total + open, 0);
  }

  /**
   * Whether every team's room is all needed for its empty slots: from then on (room only
   * shrinks with the slots it leaves empty) a group that plays no slot role never fits.
   */
  get onlySlotRolesFit(): boolean {
    return this.free.every((free, team) => free <= (this.open[team] ?? 0));
  }

  /** Whether some member of `group` can play one of the slots' roles. */
  playsASlot(group: readonly (readonly string[])[]): boolean {
    // A player of none of the slots' roles never fills one (slots are few: no set needed).
    return group.some((roles) => roles.some((role) => this.slots.includes(role)));
  }

  private teamFor(group: readonly (readonly string[])[]): number {
    const plays = this.playsASlot(group);
    let best = -1;
    let bestGain = -1;
    this.free.forEach((room, team) => {
      if (room < group.length) return;
      const gain = plays ? this.gain(team, group, false) : 0;
      if (room - group.length < (this.open[team] ?? 0) - gain) return;
      if (best < 0 || gain > bestGain || (gain === bestGain && room < (this.free[best] ?? 0))) {
        best = team;
        bestGain = gain;
      }
    });
    return best;
  }

  /**
   * How many more of `team`'s slots are filled with `group` in it: one augmenting path per
   * member. Kept (the group joins the team) only when `keep`.
   */
  private gain(team: number, group: readonly (readonly string[])[], keep: boolean): number {
    const members = this.players[team] ?? [];
    const holders = keep ? (this.holders[team] ?? []) : this.trial;
    if (!keep) holders.splice(0, holders.length, ...(this.holders[team] ?? []));
    const rolesAt = (player: number) =>
      (player < members.length ? members[player] : group[player - members.length]) ?? [];
    const seen = new Array<boolean>(this.slots.length);
    const place = (player: number): boolean => {
      const roles = rolesAt(player);
      for (let slot = 0; slot < this.slots.length; slot++) {
        if (seen[slot] || !roles.includes(this.slots[slot] ?? '')) continue;
        seen[slot] = true;
        const holder = holders[slot] ?? -1;
        if (holder < 0 || place(holder)) {
          holders[slot] = player;
          return true;
        }
      }
      return false;
    };
    let gained = 0;
    group.forEach((_, index) => {
      seen.fill(false);
      if (place(members.length + index)) gained++;
    });
    if (keep) members.push(...group);
    return gained;
  }
}

/** Whether every team of `teams` (each member's roles, per team) fills its slots. */
export function teamsFillSlots(
  teams: readonly (readonly (readonly string[])[])[],
  slots: readonly string[],
): boolean {
  return teams.every((players) => unfilledSlots(players, slots) === 0);
}

/** ROLE_UNFILLED: players are there, but not enough of them play the roles every team needs. */
export function roleUnfilled(
  rule: RoleRule,
  candidate: MatchCandidate,
  waitedMs: number,
  playersPerMatch: number,
): UnmatchedReason {
  const relaxesIn = optionalInMs(rule, waitedMs);
  const needs = Object.entries(rule.perTeam)
    .map(([role, count]) => `${count} ${role}`)
    .join(', ');
  const relaxes =
    relaxesIn === null
      ? ''
      : `; the role rule no longer applies in ${Math.ceil(relaxesIn / 1000)} s`;
  return Object.freeze({
    code: 'ROLE_UNFILLED',
    message: `waiting for players who can fill every team's roles (${needs} a team)${relaxes}`,
    details: Object.freeze({
      attribute: rule.attribute,
      perTeam: rule.perTeam,
      roles: rolesOf(candidate, rule),
      playersPerMatch,
      optionalInMs: relaxesIn,
    }),
  });
}
