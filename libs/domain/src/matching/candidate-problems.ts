/**
 * A matching pass's check of each candidate's own fields (formation-screen.ts), run on every
 * candidate of every pass: it allocates nothing for a valid candidate, the usual case.
 */
import { isValidDate } from '../shared/value.guards';
import type { MatchCandidate } from './match-candidate';

const NO_PROBLEMS: readonly string[] = Object.freeze([]);

/** What is wrong with `candidate`'s fields, as messages; empty when nothing is. */
export function candidateProblems(candidate: MatchCandidate): readonly string[] {
  let problems: string[] | undefined;
  if (!isUuidByChars(candidate.ticketId)) {
    (problems ??= []).push('ticketId must be a canonical lowercase uuid');
  }
  if (!isUuidByChars(candidate.playerId)) {
    (problems ??= []).push('playerId must be a canonical lowercase uuid');
  }
  if (typeof candidate.mode !== 'string') (problems ??= []).push('mode must be a string');
  if (typeof candidate.rating !== 'number' || !Number.isFinite(candidate.rating)) {
    (problems ??= []).push('rating must be a finite number');
  }
  const { ratingSigma } = candidate;
  if (ratingSigma !== undefined && !(Number.isFinite(ratingSigma) && ratingSigma > 0)) {
    (problems ??= []).push('ratingSigma must be a finite number > 0 when present');
  }
  if (!isValidDate(candidate.enqueuedAt)) (problems ??= []).push('enqueuedAt must be a valid Date');
  if (!isUuidListOrAbsent(candidate.blockedPlayerIds)) {
    (problems ??= []).push(
      'blockedPlayerIds must be a list of canonical lowercase uuids when present',
    );
  }
  if (!isUuidListOrAbsent(candidate.avoidedPlayerIds)) {
    (problems ??= []).push(
      'avoidedPlayerIds must be a list of canonical lowercase uuids when present',
    );
  }
  if (candidate.party !== undefined) {
    const party: unknown = candidate.party;
    const { id, size } = (typeof party === 'object' && party !== null ? party : {}) as {
      id?: unknown;
      size?: unknown;
    };
    if (!isUuidByChars(id)) (problems ??= []).push('party.id must be a canonical lowercase uuid');
    if (typeof size !== 'number' || !Number.isInteger(size) || size < 1) {
      (problems ??= []).push('party.size must be an integer >= 1');
    }
  }
  return problems ?? NO_PROBLEMS;
}

function isUuidListOrAbsent(ids: unknown): boolean {
  if (ids === undefined) return true;
  if (!Array.isArray(ids)) return false;
  for (const id of ids) if (!isUuidByChars(id)) return false;
  return true;
}

const DASH = 0x2d;
const ZERO = 0x30;
/** HEX_DIGIT[code] is 1 for the character codes of 0-9 and a-f. */
const HEX_DIGIT = new Uint8Array(128);
for (const digit of '0123456789abcdef') HEX_DIGIT[digit.charCodeAt(0)] = 1;

/**
 * The same test as isUuid (shared/value.guards: canonical lowercase, not the nil uuid), by
 * character codes: a pass makes two or three per candidate, and this takes about half the
 * regex's time. candidate-problems.spec.ts holds the two to the same answers.
 */
export function isUuidByChars(value: unknown): value is string {
  if (typeof value !== 'string' || value.length !== 36) return false;
  let nonZero = 0;
  for (let index = 0; index < 36; index++) {
    const code = value.charCodeAt(index);
    if (index === 8 || index === 13 || index === 18 || index === 23) {
      if (code !== DASH) return false;
    } else if (code >= 128 || HEX_DIGIT[code] !== 1) {
      return false;
    } else {
      nonZero |= code ^ ZERO;
    }
  }
  return nonZero !== 0;
}
