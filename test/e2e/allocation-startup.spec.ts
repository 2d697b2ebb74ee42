import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { runApp } from '../support/processes';
import { loadJoinSigner } from '../../apps/allocator/src/join-keys.loader';

/**
 * An allocator without usable key material would strand every match it picked up, so it refuses
 * to start, with one clear line and no key material in it. The refusal comes before it connects
 * to anything (no database or Redis is configured here).
 */
describe(loadJoinSigner.name, () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'mp-alloc-keys-'));
  const key = randomBytes(32).toString('base64');
  const keyFile = path.join(dir, 'keys.json');
  writeFileSync(keyFile, JSON.stringify({ k1: key }));
  writeFileSync(path.join(dir, 'empty.json'), '');
  mkdirSync(path.join(dir, 'a-directory'));

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    ['no key file configured', {}, /JOIN_KEYS_FILE must be the path of the join key file/],
    [
      'a missing file',
      { JOIN_KEYS_FILE: path.join(dir, 'nope.json'), JOIN_ACTIVE_KEY_ID: 'k1' },
      /cannot be read \(ENOENT\)/,
    ],
    [
      'an unreadable file',
      { JOIN_KEYS_FILE: path.join(dir, 'a-directory'), JOIN_ACTIVE_KEY_ID: 'k1' },
      /cannot be read \(EISDIR\)/,
    ],
    [
      'an empty file',
      { JOIN_KEYS_FILE: path.join(dir, 'empty.json'), JOIN_ACTIVE_KEY_ID: 'k1' },
      /holds no usable join keys: .*0 bytes/,
    ],
    [
      'an active key id the file lacks',
      { JOIN_KEYS_FILE: keyFile, JOIN_ACTIVE_KEY_ID: 'k2' },
      /JOIN_ACTIVE_KEY_ID "k2" is not in the key file; it must name one of the keys of .* \("k1"\)/,
    ],
    [
      'no active key id for a key map',
      { JOIN_KEYS_FILE: keyFile },
      /JOIN_ACTIVE_KEY_ID is not set; it must name one of the keys/,
    ],
  ])('refuses to start with %s', async (_, env, expected) => {
    const { code, output } = await runApp('allocator', { HEALTH_PORT: '1', ...env });
    expect(code).toBe(1);
    const lines = output.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^allocator: /);
    expect(lines[0]).toMatch(expected);
    expect(output).not.toContain(key);
  });
});

/**
 * The per-region provider settings (issue 14) are checked at start-up: a malformed or inconsistent
 * one is one line naming the variable, before the allocator connects to anything.
 */
describe('allocator region configuration', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'mp-alloc-regions-'));
  const keyFile = path.join(dir, 'keys.json');
  writeFileSync(keyFile, JSON.stringify({ k1: randomBytes(32).toString('base64') }));
  const keys = { JOIN_KEYS_FILE: keyFile, JOIN_ACTIVE_KEY_ID: 'k1' };
  const staticProvider = {
    ALLOCATION_PROVIDER: 'static',
    STATIC_HANDOFF_URL: 'http://{host}:{port}/handoff',
  };

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    [
      'a static pool entry without its region',
      { ...staticProvider, STATIC_SERVERS_BY_REGION: 'gs-1=10.0.0.1:7777' },
      /STATIC_SERVERS_BY_REGION: region gs-1: "10.0.0.1:7777" is not id=host:port/,
    ],
    [
      'both static pool forms',
      {
        ...staticProvider,
        STATIC_SERVERS: 'gs-1=10.0.0.1:7777',
        STATIC_SERVERS_BY_REGION: 'eu-west=gs-2=10.0.0.2:7777',
      },
      /set STATIC_SERVERS \(any region\) or STATIC_SERVERS_BY_REGION, not both/,
    ],
    [
      'no static pool',
      staticProvider,
      /the static provider needs STATIC_SERVERS or STATIC_SERVERS_BY_REGION/,
    ],
    [
      'a region no player can be matched in',
      { ...staticProvider, STATIC_SERVERS_BY_REGION: 'mars=gs-1=10.0.0.1:7777' },
      /regions name mars, which PROBE_REGIONS .* does not list/,
    ],
    [
      'a cluster URL for a region without a Fleet',
      {
        ALLOCATION_PROVIDER: 'agones',
        AGONES_FLEETS_BY_REGION: 'eu-west=fleet-eu',
        AGONES_API_URLS_BY_REGION: 'us-east=https://k8s-us.example:6443',
      },
      /AGONES_API_URLS_BY_REGION: region us-east has no fleet in AGONES_FLEETS_BY_REGION/,
    ],
    [
      'an unknown local region',
      { ALLOCATION_PROVIDER: 'local', LOCAL_SERVER_REGIONS: 'eu-west,Mars' },
      /LOCAL_SERVER_REGIONS must be comma-separated region names.*got "eu-west,Mars"/,
    ],
    [
      'an unknown fallback policy',
      { ALLOCATION_REGION_FALLBACK: 'closest' },
      /ALLOCATION_REGION_FALLBACK must be one of the following values: nearest, none/,
    ],
  ])('refuses to start with %s', async (_, env, expected) => {
    const { code, output } = await runApp('allocator', { HEALTH_PORT: '1', ...keys, ...env });
    expect(code).toBe(1);
    const lines = output.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^allocator: /);
    expect(lines[0]).toMatch(expected);
  });
});
