/**
 * Byte 0 of every join-auth layout: one registry for every structure, so bytes MAC'd as one
 * structure can never be accepted as another under the same key (a manifest signature is never a
 * valid join token). A new version of any structure takes a new tag; tags are never reused.
 */
export const JoinAuthFormat = {
  /** Join claims, version 1 (docs/JOIN-AUTH.md "Claim bytes"). */
  JOIN_CLAIMS_V1: 0x01,
  /** Input of the roster digest, version 1 (hashed, not MAC'd). */
  ROSTER_DIGEST_V1: 0x02,
  /** Roster manifest, version 1. */
  ROSTER_MANIFEST_V1: 0x03,
  /** Roster manifest, version 2: version 1's fields and the roster revision (backfill). */
  ROSTER_MANIFEST_V2: 0x04,
  /** Probe challenge, version 1 (docs/PROBES.md "Challenge bytes"), signed with a probe key. */
  PROBE_CHALLENGE_V1: 0x10,
  /** Probe measurement, version 1 (docs/PROBES.md "Measurement bytes"), signed with a probe key. */
  PROBE_MEASUREMENT_V1: 0x11,
} as const;
export type JoinAuthFormat = (typeof JoinAuthFormat)[keyof typeof JoinAuthFormat];
