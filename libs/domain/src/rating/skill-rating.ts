import { ordinal, rating as openskillRating } from 'openskill';

/**
 * A player's skill as openskill (Weng-Lin, Plackett-Luce) models it: `mu` the estimated skill,
 * `sigma` its uncertainty (one standard deviation), both on openskill's scale (a new player is
 * mu 25, sigma 25/3).
 */
export interface SkillRating {
  readonly mu: number;
  readonly sigma: number;
}

/** openskill's prior: what a player who never played (or was never imported) holds. */
export const DEFAULT_SKILL: SkillRating = Object.freeze({ ...openskillRating() });

/** The display rating of a new player: the `rating` the matcher and the README always talked about. */
export const DISPLAY_RATING_BASE = 1500;

/**
 * Display points per unit of openskill skill. openskill's beta (sigma / 2 = 25/6) is the skill
 * difference that wins about 76% of one-on-one games, as 200 Elo points do, so 48 points per unit
 * keeps the rating window's numbers (100, 200, 400 points) about as wide as before in odds.
 */
export const DISPLAY_POINTS_PER_SKILL = 48;

/**
 * The display rating (`players.rating`, the ticket's and candidate's `rating`): openskill's
 * ordinal (mu - 3 sigma, a conservative estimate that rises as the uncertainty shrinks) scaled
 * and shifted so that a new player is at 1500.
 */
export function displayRating(skill: SkillRating): number {
  return DISPLAY_RATING_BASE + DISPLAY_POINTS_PER_SKILL * ordinal(skill);
}

/**
 * The skill whose display rating is `rating` at uncertainty `sigma`: the inverse of
 * {@link displayRating} (mu = ordinal + 3 sigma). Used where only a display rating is known (the
 * migration of existing players, candidates) so their mean is not read as their ordinal.
 */
export function skillAtDisplayRating(rating: number, sigma: number): SkillRating {
  return {
    mu: (rating - DISPLAY_RATING_BASE) / DISPLAY_POINTS_PER_SKILL + 3 * sigma,
    sigma,
  };
}

/** Why `skill` cannot be stored or rated (finite mu, finite sigma > 0); undefined when it can. */
export function skillProblem(skill: {
  readonly mu: unknown;
  readonly sigma: unknown;
}): string | undefined {
  if (typeof skill.mu !== 'number' || !Number.isFinite(skill.mu))
    return 'mu must be a finite number';
  if (typeof skill.sigma !== 'number' || !Number.isFinite(skill.sigma) || skill.sigma <= 0)
    return 'sigma must be a finite number > 0';
  return undefined;
}

/**
 * A candidate's skill as team balance reads it, in display points: the mean (mu, not the
 * conservative ordinal the display rating is) and its standard deviation. Without a sigma the
 * rating is taken as known exactly.
 */
export function balanceSkillOf(candidate: {
  readonly rating: number;
  readonly ratingSigma?: number;
}): { mean: number; uncertainty: number } {
  const sigma = candidate.ratingSigma ?? 0;
  const uncertainty = DISPLAY_POINTS_PER_SKILL * sigma;
  return { mean: candidate.rating + 3 * uncertainty, uncertainty };
}
