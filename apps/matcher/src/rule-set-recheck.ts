import { Injectable, Logger } from '@nestjs/common';
import {
  NO_ATTRIBUTES,
  ruleSetFit,
  type MatchCandidate,
  type RuleSetFit,
} from '@matchplane/domain';
import { ActiveRuleSet, type ActiveRules } from '@matchplane/rule-sets';
import { RuleMisfitTickets } from '@matchplane/tickets';

/** A candidate the active rule set no longer takes, and why. */
export interface RuleSetMisfit {
  readonly ticketId: string;
  readonly problem: string;
}

interface Checked {
  readonly version: number | undefined;
  readonly fit: RuleSetFit;
}

/**
 * Checks a pass's candidates against the active rule set version (domain `ruleSetFit`): those
 * that fit go on, their attributes as the version reads them; those that do not are the ones a
 * version change left behind, to be ended. Each ticket is checked once per version it meets, so
 * a pass of an unchanged version checks only its new arrivals (which covers tickets the API
 * accepted under the old version before its next poll).
 */
@Injectable()
export class RuleSetRecheck {
  private readonly logger = new Logger(RuleSetRecheck.name);
  /** Per pool (a mode, or a shard of one): each ticket's last check. */
  private readonly checked = new Map<string, Map<string, Checked>>();

  constructor(
    private readonly misfitTickets: RuleMisfitTickets,
    private readonly ruleSet: ActiveRuleSet,
  ) {}

  /**
   * The candidates of `pool` that fit the active version; the others' tickets are ended
   * (RULES_CHANGED, their parties with them). A failed end leaves them out of this pass only: the
   * next one tries again.
   */
  async keepFitting(
    pool: string,
    active: ActiveRules,
    mode: string,
    candidates: readonly MatchCandidate[],
    now: Date,
  ): Promise<MatchCandidate[]> {
    // Before the table was first read, tickets may have been taken under a stored version.
    if (active.version === undefined) return [...candidates];
    const { fitting, misfits } = this.sort(pool, active, mode, candidates);
    if (misfits.length === 0) return fitting;
    const version = active.version;
    try {
      // The API may have taken a newer version before this matcher's poll: end nothing under a
      // version no longer active (the next pass checks them under the new one).
      if ((await this.ruleSet.refresh()).version !== version) return fitting;
      const ended = await this.misfitTickets.end(
        misfits.map((misfit) => misfit.ticketId),
        now,
      );
      this.logger.log(
        `rule set version ${version}: ended ${ended.length} ${mode} tickets it no longer takes, e.g. ${misfits[0]?.problem ?? ''}`,
      );
    } catch (error) {
      this.logger.warn(
        `${mode} tickets rule set version ${version} no longer takes not ended: ${(error as Error).message}`,
      );
    }
    return fitting;
  }

  sort(
    pool: string,
    active: ActiveRules,
    mode: string,
    candidates: readonly MatchCandidate[],
  ): { fitting: MatchCandidate[]; misfits: RuleSetMisfit[] } {
    const rules = active.rulesByMode.get(mode);
    if (!rules) return { fitting: [...candidates], misfits: [] };
    const schema = active.attributes.get(mode) ?? NO_ATTRIBUTES;
    const before = this.checked.get(pool);
    // Only the pool's tickets are kept: those that left it are forgotten with this pass.
    const now = new Map<string, Checked>();
    const fitting: MatchCandidate[] = [];
    const misfits: RuleSetMisfit[] = [];
    for (const candidate of candidates) {
      let checked = before?.get(candidate.ticketId);
      if (!checked || checked.version !== active.version) {
        checked = { version: active.version, fit: ruleSetFit(candidate, rules, schema) };
      }
      now.set(candidate.ticketId, checked);
      if (checked.fit.fits) {
        // Most tickets fit as they are: kept, not copied, at every pass.
        const { attributes, unchanged } = checked.fit;
        fitting.push(unchanged ? candidate : { ...candidate, attributes });
      } else misfits.push({ ticketId: candidate.ticketId, problem: checked.fit.problem });
    }
    this.checked.set(pool, now);
    return { fitting, misfits };
  }
}
