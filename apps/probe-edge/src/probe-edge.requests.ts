import { ErrorCode } from '@matchplane/contracts';
import { CodedError } from '@matchplane/errors';
import type { ProbeChallenge } from '@matchplane/join-auth';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const REGION = /^[a-z0-9_-]{1,64}$/;
const CHALLENGE_FIELDS = [
  'nonce',
  'playerId',
  'region',
  'edgeId',
  'issuedAtUs',
  'keyId',
  'signature',
];

/*
 * The bodies of the edge's probe routes (a round's is an answer's), checked by hand: a few fields
 * each, every refusal a VALIDATION_FAILED naming its field. (A validation framework per request
 * cost the edge most of its rate; docs/decisions/2026-12-06-probe-edge-plain-http.md.)
 */

export interface ChallengeRequest {
  readonly playerId: string;
  readonly region: string;
}

export interface AnswerRequest extends ChallengeRequest {
  readonly challenge: ProbeChallenge;
}

export function challengeRequest(body: unknown): ChallengeRequest {
  const fields = objectBody(body, ['playerId', 'region']);
  return { playerId: playerIdOf(fields), region: regionOf(fields) };
}

export function answerRequest(body: unknown): AnswerRequest {
  const fields = objectBody(body, ['playerId', 'region', 'challenge']);
  return {
    playerId: playerIdOf(fields),
    region: regionOf(fields),
    challenge: echoedChallenge(fields.challenge),
  };
}

function playerIdOf(body: Record<string, unknown>): string {
  return field(body, 'playerId', UUID, 'a lowercase UUID (the session’s player id)');
}

function regionOf(body: Record<string, unknown>): string {
  return field(body, 'region', REGION, 'a region name, e.g. eu-west');
}

function invalid(message: string): CodedError {
  return new CodedError(ErrorCode.VALIDATION_FAILED, message);
}

/** A JSON object with exactly the allowed fields (an unknown one is refused, not ignored). */
function objectBody(value: unknown, allowed: readonly string[]): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalid(`the body must be a JSON object with ${allowed.join(', ')}`);
  }
  const unknown = Object.keys(value).filter((key) => !allowed.includes(key));
  if (unknown.length > 0) throw invalid(`property ${unknown[0]} should not exist`);
  return value as Record<string, unknown>;
}

function field(body: Record<string, unknown>, name: string, shape: RegExp, what: string): string {
  const value = body[name];
  if (typeof value !== 'string' || !shape.test(value)) throw invalid(`${name} must be ${what}`);
  return value;
}

/** The challenge's JSON shape; its bytes and MAC are checked by the edge. */
function echoedChallenge(value: unknown): ProbeChallenge {
  const challenge = objectBody(value, CHALLENGE_FIELDS);
  for (const name of CHALLENGE_FIELDS) {
    const ok =
      name === 'issuedAtUs'
        ? Number.isSafeInteger(challenge[name])
        : typeof challenge[name] === 'string';
    if (!ok)
      throw invalid(
        `challenge.${name} is missing or of the wrong type: echo the challenge unchanged`,
      );
  }
  return challenge as unknown as ProbeChallenge;
}
