import { parseDemoArgs } from './demo.args';

describe(parseDemoArgs.name, () => {
  it('plays without a ready check unless --ready-check asks for one', () => {
    expect(parseDemoArgs([])).toMatchObject({ ok: true, args: { readyCheck: false } });
    expect(parseDemoArgs(['--ready-check'])).toMatchObject({
      ok: true,
      args: { readyCheck: true, players: 4 },
    });
  });

  it('refuses what it does not know, naming it', () => {
    const parsed = parseDemoArgs(['--ready-chek']);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.problem).toContain('--ready-chek');
  });
});
