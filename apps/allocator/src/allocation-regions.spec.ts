import { agonesRegions, localRegions, staticPool } from './allocation-regions';

describe('allocation regions', () => {
  it('reads a static pool per region, each server in its region', () => {
    expect(
      staticPool({
        STATIC_SERVERS_BY_REGION:
          'eu-west=gs-1=10.0.0.5:7777,gs-2=10.0.0.6:7777; us-east=gs-3=[::1]:7777',
      }),
    ).toEqual([
      { id: 'gs-1', host: '10.0.0.5', port: 7777, region: 'eu-west' },
      { id: 'gs-2', host: '10.0.0.6', port: 7777, region: 'eu-west' },
      { id: 'gs-3', host: '[::1]', port: 7777, region: 'us-east' },
    ]);
  });

  it('reads STATIC_SERVERS as one pool for any region', () => {
    expect(staticPool({ STATIC_SERVERS: 'gs-1=10.0.0.5:7777' })).toEqual([
      { id: 'gs-1', host: '10.0.0.5', port: 7777 },
    ]);
  });

  it.each([
    [
      'a server id in two regions',
      'eu-west=gs-1=10.0.0.5:7777;us-east=gs-1=10.1.0.5:7777',
      /gs-1 is listed twice/,
    ],
    [
      'a region twice',
      'eu-west=gs-1=10.0.0.5:7777;eu-west=gs-2=10.0.0.6:7777',
      /region eu-west is listed twice/,
    ],
    ['an empty region', 'eu-west=', /"eu-west=" is not region=value/],
  ])('refuses %s, naming STATIC_SERVERS_BY_REGION', (_, raw, expected) => {
    expect(() => staticPool({ STATIC_SERVERS_BY_REGION: raw })).toThrow(
      new RegExp(`STATIC_SERVERS_BY_REGION: .*${expected.source}`),
    );
  });

  it('reads a Fleet per region, a region in its own cluster with its own token', () => {
    const regions = agonesRegions({
      AGONES_FLEETS_BY_REGION: 'eu-west=gs-eu;us-east=gs-us',
      AGONES_API_URLS_BY_REGION: 'us-east=https://k8s-us.example:6443',
      AGONES_TOKEN_FILES_BY_REGION: 'us-east=/var/run/us/token',
    });
    expect(regions && Object.fromEntries(regions)).toEqual({
      'eu-west': { fleet: 'gs-eu' },
      'us-east': {
        fleet: 'gs-us',
        apiUrl: 'https://k8s-us.example:6443',
        tokenFile: '/var/run/us/token',
      },
    });
    expect(agonesRegions({ AGONES_FLEET: 'gs' })).toBeUndefined();
    expect(() => agonesRegions({ AGONES_FLEETS_BY_REGION: 'eu-west=Not_A_Fleet' })).toThrow(
      /AGONES_FLEETS_BY_REGION: "Not_A_Fleet" \(region eu-west\) is not a Fleet name/,
    );
  });

  it('reads LOCAL_SERVER_REGIONS, unset meaning any region', () => {
    expect(localRegions('eu-west, us-east')).toEqual(['eu-west', 'us-east']);
    expect(localRegions(undefined)).toBeUndefined();
  });
});
