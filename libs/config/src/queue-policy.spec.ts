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

  it('reads fill steps after the teams, and lets a free-for-all have up to 100 teams', () => {
    expect(parseQueueModes('br:1x100@30000:80@60000:60')).toEqual([
      {
        mode: 'br',
        teamSize: 1,
        teamCount: 100,
        teamSizes: new Array<number>(100).fill(1),
        fill: [
          { afterMs: 30000, minPlayers: 80 },
          { afterMs: 60000, minPlayers: 60 },
        ],
      },
    ]);
  });

  it.each([
    ['br:1x100@30000', /"@30000" is not @<afterMs>:<minPlayers>/],
    ['br:1x100@0:80', /afterMs must be above 0/],
    ['sq:4x25@30000:62', /minPlayers must be whole teams of 4, at least two and fewer than 100/],
    ['br:1x100@30000:100', /fewer than 100 players \(got 100\)/],
    ['br:1x100@30000:60@60000:80', /each fill step must come later .* and lower the minimum/],
    ['br:1x100@60000:60@30000:40', /each fill step must come later/],
    ['hunt:4+1@30000:4', /fill steps need teams of one size/],
    ['big:20x100', /at most 1000 players per match/],
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
