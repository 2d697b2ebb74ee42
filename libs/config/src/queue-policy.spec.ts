import { ConfigError, loadConfig } from './load-config';
import { parseQueueModes } from './queue-policy';
import { ServiceConfig } from './service.config';

describe(parseQueueModes.name, () => {
  it('reads equal teams as team size x team count', () => {
    expect(parseQueueModes('duel:1x2,squad:4x2')).toEqual([
      { mode: 'duel', teamSize: 1, teamCount: 2, teamSizes: [1, 1] },
      { mode: 'squad', teamSize: 4, teamCount: 2, teamSizes: [4, 4] },
    ]);
  });

  it('reads teams of different sizes as one size per team, the largest as the team size', () => {
    expect(parseQueueModes('hunt:4+1,trio:1+3+2')).toEqual([
      { mode: 'hunt', teamSize: 4, teamCount: 2, teamSizes: [4, 1] },
      { mode: 'trio', teamSize: 3, teamCount: 3, teamSizes: [1, 3, 2] },
    ]);
  });

  it.each([
    ['hunt:4+0', /"hunt:4\+0": each team's size must be 1-59/],
    ['hunt:60+1', /"hunt:60\+1": each team's size must be 1-59/],
    ['big:1+1+1+1+1+1+1+1+1+1', /at most 9 teams/],
    ['hunt:4+', /"hunt:4\+" is not mode:<team size>x<team count>/],
    ['hunt', /"hunt" is not mode:<teams>/],
    ['Hunt:4+1', /"Hunt:4\+1" is not mode:<teams> \(a mode name/],
  ])('refuses %s, saying why', (raw, message) => {
    expect(() => parseQueueModes(raw)).toThrow(message);
  });

  it('refuses to start with the entry and the reason in the message', () => {
    expect(() => loadConfig(ServiceConfig, { QUEUE_MODES: 'duel:1x2,hunt:4+0' })).toThrow(
      ConfigError,
    );
    expect(() => loadConfig(ServiceConfig, { QUEUE_MODES: 'duel:1x2,hunt:4+0' })).toThrow(
      /QUEUE_MODES must be comma-separated .*hunt:4\+1.*\("hunt:4\+0": each team's size must be 1-59\)/,
    );
  });
});
