import { Injectable, Module } from '@nestjs/common';
import {
  compareText,
  formMatches,
  type MatchCandidate,
  type MatchingFunction,
  type ProposedMatch,
  type UnmatchedReason,
  type UnmatchedTicket,
} from '@matchplane/domain';
import type { MatchingFunctionFactory } from '../../matcher/src/matching-function';

/*
 * Example (docs/EXTENDING.md "Your own matching rules"): a ranked queue where two members of the
 * same clan never play in the same match (on opposite teams they could throw for each other, on
 * the same team they would be a premade in a solo queue). The rule wraps the default formMatches,
 * so everything else it guarantees still holds: oldest first, best region, balanced teams of
 * exactly the configured size.
 */

/** The studio's service the rule depends on, provided by the studio's own module. */
@Injectable()
export class StudioClans {
  // The matching function is synchronous and runs inside every pass: it reads a local view that
  // the studio keeps current (here set directly; in production refreshed from its social service).
  private readonly clans = new Map<string, string>();

  join(playerId: string, clan: string): void {
    this.clans.set(playerId, clan);
  }

  clanOf(playerId: string): string | undefined {
    return this.clans.get(playerId);
  }
}

/** Shown to the held player through GET /v1/queue/tickets/{id}; names nobody else. */
export const HELD_FOR_CLANMATE: UnmatchedReason = Object.freeze({
  code: 'INVALID_CANDIDATE',
  message: 'a member of your clan is in this search: kept apart, considered again once they play',
  details: Object.freeze({ problems: Object.freeze(['clanmate in the same search']) }),
});

type ClanOf = (playerId: string) => string | undefined;

/**
 * `inner` with clanmates kept apart. When `inner` proposes a match holding two members of a
 * clan, the younger one is held back and `inner` runs again without it; a held ticket comes back
 * within the same pass once the clanmate it was held for has been matched. Every returned match
 * is one `inner` proposed, so its shape is `inner`'s. A pass costs one `inner` run per clash
 * resolved: fine for clans that rarely queue together, not for a queue of whole clans.
 */
export function keepClansApart(inner: MatchingFunction, clanOf: ClanOf): MatchingFunction {
  return (candidates, rules, now) => {
    const byTicket = new Map(candidates.map((candidate) => [candidate.ticketId, candidate]));
    const matches: ProposedMatch[] = [];
    let open = [...candidates];
    /** Held ticket -> the older clanmate's ticket it was proposed with. */
    const heldFor = new Map<string, string>();
    for (;;) {
      const formation = inner(
        open.filter((candidate) => !heldFor.has(candidate.ticketId)),
        rules,
        now,
      );
      const clash = firstClash(formation.matches, byTicket, clanOf);
      if (clash) {
        heldFor.set(clash.younger, clash.older);
        continue;
      }
      matches.push(...formation.matches);
      const matched = new Set(
        formation.matches.flatMap((match) => match.participants.map((p) => p.ticketId)),
      );
      open = open.filter((candidate) => !matched.has(candidate.ticketId));
      // Terminates: a held ticket returns only after the older clanmate was matched, for good.
      const released = [...heldFor].filter(([, older]) => matched.has(older));
      if (released.length === 0) {
        const held: UnmatchedTicket[] = [...heldFor.keys()].map((ticketId) => ({
          ticketId,
          reason: HELD_FOR_CLANMATE,
        }));
        const age = (ticket: UnmatchedTicket) => byTicket.get(ticket.ticketId);
        return {
          matches: matches.sort((a, b) =>
            byAge(byTicket.get(a.anchorTicketId), byTicket.get(b.anchorTicketId)),
          ),
          unmatched: [...formation.unmatched, ...held].sort((a, b) => byAge(age(a), age(b))),
        };
      }
      for (const [ticketId] of released) heldFor.delete(ticketId);
    }
  };
}

/** The first proposal with two members of one clan: its younger member and the older one. */
function firstClash(
  matches: readonly ProposedMatch[],
  byTicket: ReadonlyMap<string, MatchCandidate>,
  clanOf: ClanOf,
): { younger: string; older: string } | undefined {
  for (const match of matches) {
    const members = match.participants
      .map((participant) => byTicket.get(participant.ticketId))
      .filter((candidate): candidate is MatchCandidate => candidate !== undefined)
      .sort(byAge);
    const seen = new Map<string, string>();
    for (const member of members) {
      const clan = clanOf(member.playerId);
      if (clan === undefined) continue;
      const older = seen.get(clan);
      if (older !== undefined) return { younger: member.ticketId, older };
      seen.set(clan, member.ticketId);
    }
  }
  return undefined;
}

/** formMatches' age order: enqueued first, then ticket id. */
function byAge(a: MatchCandidate | undefined, b: MatchCandidate | undefined): number {
  if (!a || !b) return 0;
  return a.enqueuedAt.getTime() - b.enqueuedAt.getTime() || compareText(a.ticketId, b.ticketId);
}

/** The matcher's binding: `MatcherModule.forRoot(config, { imports, matchingFunction })`. */
export const clanMatchingFunction: MatchingFunctionFactory = {
  inject: [StudioClans],
  useFactory: (clans: StudioClans) =>
    keepClansApart(formMatches, (playerId) => clans.clanOf(playerId)),
};

/** The studio's module: what its matching rule needs. */
@Module({ providers: [StudioClans], exports: [StudioClans] })
export class StudioClansModule {}
