import { randomBytes, randomUUID } from 'node:crypto';
import { JoinAuthFormat } from './join-auth.formats';
import { isCanonicalUuid, isKeyId } from './join-claims.codec';
import type { KeySet } from './key-set';
import {
  ByteReader,
  ByteWriter,
  decodeBase64Url,
  isWellFormedString,
  LayoutError,
  utf8Length,
} from './length-prefixed.codec';

/**
 * Probe challenges and measurements: what a regional probe edge signs and the API verifies, with
 * a probe key set (same file format and rotation as the join keys, a different Secret). The byte
 * layouts are documented in docs/PROBES.md; the key id is inside the MAC'd bytes.
 */

/** A challenge as the edge hands it out; the client echoes it back unchanged. */
export interface ProbeChallenge {
  readonly nonce: string;
  readonly playerId: string;
  readonly region: string;
  /** The edge process that issued it: its monotonic clock means nothing to another process. */
  readonly edgeId: string;
  /** Microseconds on the issuing edge's monotonic clock (process.hrtime), stamped as it is sent. */
  readonly issuedAtUs: number;
  readonly keyId: string;
  /** base64url HMAC-SHA256 over the challenge bytes. */
  readonly signature: string;
}

/** A signed record of RTT samples taken by an edge, handed by the player to the API (single use). */
export interface ProbeMeasurement {
  readonly measurementId: string;
  readonly playerId: string;
  readonly region: string;
  /** RTTs in milliseconds with microsecond precision (at most 3 decimals). */
  readonly samplesMs: readonly number[];
  /** Wall clock of the edge when it measured (ISO 8601, ms precision). */
  readonly measuredAt: string;
  readonly keyId: string;
  readonly signature: string;
}

export const PROBE_REGION_MAX_BYTES = 64;
export const PROBE_MAX_SAMPLES = 16;
const NONCE = /^[A-Za-z0-9_-]{22}$/;
const EDGE_ID = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_SAMPLE_US = 60_000_000;

/** Why a challenge or measurement is not accepted (mapped to a problem code by its transport). */
export type ProbeSignatureProblem = 'MALFORMED' | 'UNKNOWN_KEY' | 'BAD_SIGNATURE';

export function isProbeRegion(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    value.length > 0 &&
    isWellFormedString(value) &&
    utf8Length(value) <= PROBE_REGION_MAX_BYTES
  );
}

const NONCE_BYTES = 16;
/** Random bytes drawn 256 nonces at a time: one randomBytes call costs as much as a whole probe's HMAC. */
const noncePool = { bytes: Buffer.alloc(0), offset: 0 };

export function newProbeNonce(): string {
  if (noncePool.offset + NONCE_BYTES > noncePool.bytes.length) {
    noncePool.bytes = randomBytes(NONCE_BYTES * 256);
    noncePool.offset = 0;
  }
  const start = noncePool.offset;
  noncePool.offset += NONCE_BYTES;
  return noncePool.bytes.toString('base64url', start, start + NONCE_BYTES);
}

export function newMeasurementId(): string {
  return randomUUID();
}

/** Tag, key id, nonce, player, region, edge id (u16-length-prefixed UTF-8), then u64 issued µs. */
export function encodeProbeChallenge(challenge: Omit<ProbeChallenge, 'signature'>): Buffer {
  return new ByteWriter()
    .u8(JoinAuthFormat.PROBE_CHALLENGE_V1)
    .str16(challenge.keyId)
    .str16(challenge.nonce)
    .str16(challenge.playerId)
    .str16(challenge.region)
    .str16(challenge.edgeId)
    .u64(challenge.issuedAtUs)
    .toBuffer();
}

/**
 * The challenge a datagram carries: its challenge bytes then the 32-byte MAC (docs/PROBES.md
 * "UDP"); undefined when the bytes are not one.
 */
export function decodeProbeChallenge(bytes: Uint8Array): ProbeChallenge | undefined {
  try {
    const reader = new ByteReader(bytes);
    if (reader.u8('tag') !== JoinAuthFormat.PROBE_CHALLENGE_V1) return undefined;
    const keyId = reader.str16('keyId');
    const nonce = reader.str16('nonce');
    const playerId = reader.str16('playerId');
    const region = reader.str16('region');
    const edgeId = reader.str16('edgeId');
    const issuedAtUs = reader.u64('issuedAtUs');
    const signature = reader.fixed('mac', 32).toString('base64url');
    reader.end();
    return { keyId, nonce, playerId, region, edgeId, issuedAtUs, signature };
  } catch (error) {
    if (error instanceof LayoutError) return undefined;
    throw error;
  }
}

/** The challenge bytes followed by its 32-byte MAC: what a UDP challenge datagram carries. */
export function probeChallengeDatagramBody(challenge: ProbeChallenge): Buffer {
  const mac = decodeBase64Url(challenge.signature);
  if (mac === undefined) throw new Error('challenge signature is not base64url');
  return Buffer.concat([encodeProbeChallenge(challenge), mac]);
}

/** Tag, key id, measurement id, player, region, u64 measured-at epoch ms, u8 count, u32 µs each. */
export function encodeProbeMeasurement(measurement: Omit<ProbeMeasurement, 'signature'>): Buffer {
  const writer = new ByteWriter()
    .u8(JoinAuthFormat.PROBE_MEASUREMENT_V1)
    .str16(measurement.keyId)
    .str16(measurement.measurementId)
    .str16(measurement.playerId)
    .str16(measurement.region)
    .u64(Date.parse(measurement.measuredAt))
    .u8(measurement.samplesMs.length);
  for (const sample of measurement.samplesMs) writer.u32(Math.round(sample * 1000));
  return writer.toBuffer();
}

/** Signs with the set's key `keyId` (the caller's active key). */
export function signProbeChallenge(
  keys: KeySet,
  keyId: string,
  fields: Omit<ProbeChallenge, 'keyId' | 'signature'>,
): ProbeChallenge {
  const unsigned = { ...fields, keyId };
  return { ...unsigned, signature: macOf(keys, keyId, encodeProbeChallenge(unsigned)) };
}

export function signProbeMeasurement(
  keys: KeySet,
  keyId: string,
  fields: Omit<ProbeMeasurement, 'keyId' | 'signature'>,
): ProbeMeasurement {
  const unsigned = { ...fields, keyId };
  return { ...unsigned, signature: macOf(keys, keyId, encodeProbeMeasurement(unsigned)) };
}

/** undefined when the challenge is well formed and signed by a key of the set. */
export function probeChallengeProblem(
  keys: KeySet,
  challenge: ProbeChallenge,
): ProbeSignatureProblem | undefined {
  const wellFormed =
    NONCE.test(challenge.nonce) &&
    isCanonicalUuid(challenge.playerId) &&
    isProbeRegion(challenge.region) &&
    EDGE_ID.test(challenge.edgeId) &&
    Number.isSafeInteger(challenge.issuedAtUs) &&
    challenge.issuedAtUs >= 0 &&
    isKeyId(challenge.keyId);
  if (!wellFormed) return 'MALFORMED';
  return signatureProblem(
    keys,
    challenge.keyId,
    encodeProbeChallenge(challenge),
    challenge.signature,
  );
}

/** undefined when the measurement is well formed and signed by a key of the set. */
export function probeMeasurementProblem(
  keys: KeySet,
  measurement: ProbeMeasurement,
): ProbeSignatureProblem | undefined {
  const measuredAtMs = Date.parse(measurement.measuredAt);
  const wellFormed =
    isCanonicalUuid(measurement.measurementId) &&
    isCanonicalUuid(measurement.playerId) &&
    isProbeRegion(measurement.region) &&
    Number.isFinite(measuredAtMs) &&
    new Date(measuredAtMs).toISOString() === measurement.measuredAt &&
    Array.isArray(measurement.samplesMs) &&
    measurement.samplesMs.length >= 1 &&
    measurement.samplesMs.length <= PROBE_MAX_SAMPLES &&
    measurement.samplesMs.every(isSampleMs) &&
    isKeyId(measurement.keyId);
  if (!wellFormed) return 'MALFORMED';
  return signatureProblem(
    keys,
    measurement.keyId,
    encodeProbeMeasurement(measurement),
    measurement.signature,
  );
}

/** Milliseconds with at most microsecond precision, so the signed µs value is exactly what is read. */
function isSampleMs(value: unknown): value is number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) return false;
  const us = Math.round(value * 1000);
  return us <= MAX_SAMPLE_US && us / 1000 === value;
}

function macOf(keys: KeySet, keyId: string, bytes: Uint8Array): string {
  const mac = keys.mac(keyId, bytes);
  if (mac === undefined) throw new Error(`probe key set holds no key ${JSON.stringify(keyId)}`);
  return mac.toString('base64url');
}

function signatureProblem(
  keys: KeySet,
  keyId: string,
  bytes: Uint8Array,
  signature: unknown,
): ProbeSignatureProblem | undefined {
  if (!keys.has(keyId)) return 'UNKNOWN_KEY';
  const mac = typeof signature === 'string' ? decodeBase64Url(signature) : undefined;
  if (mac === undefined) return 'MALFORMED';
  return keys.macMatches(keyId, bytes, mac) ? undefined : 'BAD_SIGNATURE';
}
