import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '@matchplane/config';
import { MatcherConfig } from './matcher.config';
import type { MatchFormation, MatchingFunction, ModeRules } from '@matchplane/domain';
import { MetricsRegistry } from '@matchplane/observability';
import type { ActiveRuleSet, ActiveRules } from '@matchplane/rule-sets';
import { ShadowMatching, shadowRules } from './shadow-matching';

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

  it('reads and checks the proposal at start-up, over the configuration’s own rules', () => {
    const file = proposedFile({ MATCH_WIDENING: '0:80:200' });
    const config = loadConfig(MatcherConfig, {
      QUEUE_MODES: 'arena:3x2',
      MATCHER_SHADOW_RULES_FILE: file,
    });
    expect(shadowRules(config)).toEqual({ file, variables: { MATCH_WIDENING: '0:80:200' } });
    const refused = proposedFile({ QUEUE_MODES: 'arena:0x2' });
    expect(() =>
      shadowRules(
        loadConfig(MatcherConfig, { QUEUE_MODES: 'arena:3x2', MATCHER_SHADOW_RULES_FILE: refused }),
      ),
    ).toThrow(/MATCHER_SHADOW_RULES_FILE .*QUEUE_MODES/);
  });

  it('is null when no file is configured', () => {
    expect(shadowRules(loadConfig(MatcherConfig, { QUEUE_MODES: 'arena:3x2' }))).toBeNull();
  });
});

describe(ShadowMatching.name, () => {
  const NOW = new Date('2026-12-07T12:00:00Z');
  const empty: MatchFormation = { matches: [], unmatched: [] };

  it('lays the proposal over the active rule set version, and again when that version changes', () => {
    const attributes = JSON.stringify({
      arena: {
        attributes: { platform: { type: 'string', values: ['pc', 'console'] } },
        rules: [{ equal: 'platform' }],
      },
    });
    // The process was configured with 3x2; the operator's active versions say otherwise.
    let active: ActiveRules = {
      version: 2,
      variables: { QUEUE_MODES: 'arena:2x2', QUEUE_MODE_ATTRIBUTES: attributes },
    } as ActiveRules;
    const ruleSet = { current: () => active } as unknown as ActiveRuleSet;
    const proposedPasses: ModeRules[][] = [];
    const matching: MatchingFunction = (_pool, rules) => {
      proposedPasses.push([...rules]);
      return empty;
    };
    const shadow = new ShadowMatching(
      { file: 'proposed.json', variables: { MATCH_WIDENING: '0:80:200' } },
      matching,
      new MetricsRegistry('matcher-test'),
      ruleSet,
    );
    shadow.compare('arena', [], empty, NOW);
    active = { version: 3, variables: { QUEUE_MODES: 'arena:4x2' } } as ActiveRules;
    shadow.compare('arena', [], empty, NOW);
    expect(
      proposedPasses.map(([rules]) => [rules?.teamSize, rules?.attributeRules?.length ?? 0]),
    ).toEqual([
      [2, 1],
      [4, 0],
    ]);
    expect(proposedPasses[1]![0]!.widening).toEqual([
      { afterMs: 0, maxRttMs: 80, ratingWindow: 200 },
    ]);
  });
});
