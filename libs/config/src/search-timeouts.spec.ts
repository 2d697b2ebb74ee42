import { loadConfig } from './load-config';
import { parseSearchTimeouts } from './search-timeouts';
import { ServiceConfig } from './service.config';

describe(parseSearchTimeouts.name, () => {
  it('gives every mode the default, a named mode its own, and none without a default', () => {
    expect([...parseSearchTimeouts('*=600000,squad=1200000', ['duel', 'squad'])]).toEqual([
      ['duel', 600_000],
      ['squad', 1_200_000],
    ]);
    expect([...parseSearchTimeouts('squad=60000', ['duel', 'squad'])]).toEqual([['squad', 60_000]]);
    expect([...parseSearchTimeouts('', ['duel'])]).toEqual([]);
  });

  it('refuses at start-up an unknown mode, a malformed entry and a timeout out of range', () => {
    expect(() =>
      loadConfig(ServiceConfig, {
        QUEUE_MODES: 'duel:1x2',
        QUEUE_SEARCH_TIMEOUTS: 'ranked=60000,duel=1,x',
      }),
    ).toThrow(
      /QUEUE_SEARCH_TIMEOUTS .*"ranked", which QUEUE_MODES does not list.*"duel=1": the timeout must be whole ms.*"x" is not mode=ms/,
    );
  });
});
