import { parseDemoArgs } from './demo.args';

describe(parseDemoArgs.name, () => {
  it('plays without a ready check or a reconnect unless asked (--ready-check, --reconnect)', () => {
    expect(parseDemoArgs([])).toMatchObject({
      ok: true,
      args: { readyCheck: false, reconnect: false },
    });
    expect(parseDemoArgs(['--ready-check', '--reconnect'])).toMatchObject({
      ok: true,
      args: { readyCheck: true, reconnect: true, players: 4 },
    });
  });

  it('refuses what it does not know, naming it', () => {
    const parsed = parseDemoArgs(['--ready-chek']);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.problem).toContain('--ready-chek');
  });
});
