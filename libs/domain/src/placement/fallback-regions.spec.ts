import { rankFallbackRegions } from './fallback-regions';

describe(rankFallbackRegions.name, () => {
  const served = ['eu-west', 'us-east', 'us-west', 'ap-southeast'];

  it('ranks the other served regions every player measured by worst RTT, then sum, then name', () => {
    const ranked = rankFallbackRegions(
      [
        { 'eu-west': 20, 'us-east': 90, 'us-west': 140, 'ap-southeast': 90 },
        { 'eu-west': 25, 'us-east': 80, 'us-west': 130, 'ap-southeast': 60 },
      ],
      { matchRegion: 'eu-west', maxWorstRttMs: 1_000, served },
    );
    expect(ranked).toEqual([
      { region: 'ap-southeast', worstRttMs: 90, sumRttMs: 150 },
      { region: 'us-east', worstRttMs: 90, sumRttMs: 170 },
      { region: 'us-west', worstRttMs: 140, sumRttMs: 270 },
    ]);
  });

  it('leaves out regions over the worst-RTT limit, unmeasured by a player, or not served', () => {
    const ranked = rankFallbackRegions(
      [
        { 'eu-west': 20, 'us-east': 90, 'us-west': 140, 'sa-east': 100 },
        { 'eu-west': 25, 'us-east': 80, 'us-west': 130 },
      ],
      { matchRegion: 'eu-west', maxWorstRttMs: 100, served: ['us-east', 'us-west', 'eu-west'] },
    );
    expect(ranked.map((option) => option.region)).toEqual(['us-east']);
  });

  it('answers nothing for a match without players or measurements', () => {
    expect(rankFallbackRegions([], { matchRegion: 'eu-west', maxWorstRttMs: 100, served })).toEqual(
      [],
    );
    expect(
      rankFallbackRegions([{}], { matchRegion: 'eu-west', maxWorstRttMs: 100, served }),
    ).toEqual([]);
  });
});
