import { loadConfig } from './load-config';
import { parseRejoinGrace } from './rejoin-grace';
import { ServiceConfig } from './service.config';

describe(parseRejoinGrace.name, () => {
  it('gives every mode 60 s by default, and a named mode its own', () => {
    const config = loadConfig(ServiceConfig, { QUEUE_MODES: 'duel:1x2,squad:4x2' });
    expect([...parseRejoinGrace(config.QUEUE_REJOIN_GRACE, ['duel', 'squad'])]).toEqual([
      ['duel', 60_000],
      ['squad', 60_000],
    ]);
    expect([...parseRejoinGrace('*=30000,squad=120000', ['duel', 'squad'])]).toEqual([
      ['duel', 30_000],
      ['squad', 120_000],
    ]);
  });

  it('refuses at start-up an unknown mode and a window out of range', () => {
    expect(() =>
      loadConfig(ServiceConfig, {
        QUEUE_MODES: 'duel:1x2',
        QUEUE_REJOIN_GRACE: 'ranked=20000,duel=900000',
      }),
    ).toThrow(
      /QUEUE_REJOIN_GRACE .*"ranked", which QUEUE_MODES does not list.*"duel=900000": the timeout must be whole ms from 1000 to 600000/,
    );
  });
});
