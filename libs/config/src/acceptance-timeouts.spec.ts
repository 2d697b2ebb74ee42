import { parseAcceptanceTimeouts } from './acceptance-timeouts';
import { loadConfig } from './load-config';
import { ServiceConfig } from './service.config';

describe(parseAcceptanceTimeouts.name, () => {
  it('has no ready check by default, and gives a named mode its own', () => {
    const config = loadConfig(ServiceConfig, { QUEUE_MODES: 'duel:1x2,squad:4x2' });
    expect([
      ...parseAcceptanceTimeouts(config.QUEUE_ACCEPTANCE_TIMEOUTS, ['duel', 'squad']),
    ]).toEqual([]);
    expect([...parseAcceptanceTimeouts('squad=20000', ['duel', 'squad'])]).toEqual([
      ['squad', 20_000],
    ]);
    expect([...parseAcceptanceTimeouts('*=15000', ['duel'])]).toEqual([['duel', 15_000]]);
  });

  it('refuses at start-up an unknown mode and a timeout out of its own range', () => {
    expect(() =>
      loadConfig(ServiceConfig, {
        QUEUE_MODES: 'duel:1x2',
        QUEUE_ACCEPTANCE_TIMEOUTS: 'ranked=20000,duel=600000',
      }),
    ).toThrow(
      /QUEUE_ACCEPTANCE_TIMEOUTS .*"ranked", which QUEUE_MODES does not list.*"duel=600000": the timeout must be whole ms from 1000 to 300000/,
    );
  });
});
