import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '@matchplane/config';
import { MatcherConfig } from './matcher.config';
import { shadowRules } from './shadow-matching';

describe('shadowRules', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'mp-shadow-rules-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const proposedFile = (variables: Record<string, unknown>) => {
    const file = path.join(dir, 'proposed.json');
    writeFileSync(file, JSON.stringify(variables));
    return file;
  };

  it("lays the proposed variables over the active configuration's rules, not over the process environment", () => {
    // A matcher booted with its own configuration (tests, a studio's code) whose modes differ from
    // whatever this process's environment says.
    const file = proposedFile({ MATCH_WIDENING: '0:80:200' });
    const config = loadConfig(MatcherConfig, {
      QUEUE_MODES: 'arena:3x2',
      QUEUE_MODE_ATTRIBUTES: JSON.stringify({
        arena: {
          attributes: { platform: { type: 'string', values: ['pc', 'console'] } },
          rules: [{ equal: 'platform' }],
        },
      }),
      MATCHER_SHADOW_RULES_FILE: file,
    });
    const rules = shadowRules(config);
    expect([...(rules?.keys() ?? [])]).toEqual(['arena']);
    const arena = rules?.get('arena');
    expect(arena).toMatchObject({ teamSize: 3, teamCount: 2 });
    expect(arena?.widening).toEqual([{ afterMs: 0, maxRttMs: 80, ratingWindow: 200 }]);
    expect(arena?.attributeRules).toHaveLength(1);
  });

  it('is null when no file is configured', () => {
    expect(shadowRules(loadConfig(MatcherConfig, { QUEUE_MODES: 'arena:3x2' }))).toBeNull();
  });
});
