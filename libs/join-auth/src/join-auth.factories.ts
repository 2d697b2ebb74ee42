import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type UnsignedJoinClaims } from './join-claims.codec';
import { KeySet } from './key-set';

// Test factories for the join-auth specs; not exported from the library's index.

export const T0 = 1_767_225_600_000; // 2026-01-01T00:00:00.000Z

export function testKey(label: string): Buffer {
  return createHash('sha256').update(`join-auth spec key ${label}`).digest();
}

export function newKeySet(...keyIds: string[]): KeySet {
  return KeySet.fromKeys(new Map(keyIds.map((id) => [id, testKey(id)])));
}

export function newClaims(overrides: Partial<UnsignedJoinClaims> = {}): UnsignedJoinClaims {
  return {
    matchId: randomUUID(),
    playerId: randomUUID(),
    serverId: 'gs-1',
    endpoint: '127.0.0.1:7777',
    issuedAt: T0,
    expiresAt: T0 + 300_000,
    ...overrides,
  };
}

/**
 * For a spec file: a scratch directory made before its tests and removed after them; the function
 * answered writes one key file there with `contents` and answers its path.
 */
export function scratchKeyFiles(): (contents: string | Buffer) => string {
  let dir = '';
  let written = 0;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'join-auth-keys-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return (contents) => {
    const path = join(dir, `keys-${++written}`);
    writeFileSync(path, contents);
    return path;
  };
}
