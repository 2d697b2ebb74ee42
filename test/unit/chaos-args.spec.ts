import { ALL_FAULTS, HA_FAULTS, parseChaosArgs } from '../chaos/chaos.args';

/** `npm run chaos` flags: the topology chooses which faults exist. */
describe('chaos run arguments', () => {
  it('runs the default topology and its faults when no topology is named', () => {
    expect(parseChaosArgs([])).toMatchObject({
      ok: true,
      args: { topology: 'default', faults: [...ALL_FAULTS] },
    });
  });

  it('takes the HA topology with its own faults, a count of them or a list', () => {
    expect(parseChaosArgs(['--topology=ha'])).toMatchObject({
      ok: true,
      args: { topology: 'ha', faults: [...HA_FAULTS] },
    });
    expect(parseChaosArgs(['--topology=ha', '--faults=10'])).toMatchObject({
      ok: true,
      args: { faults: HA_FAULTS.slice(0, 10) },
    });
    expect(
      parseChaosArgs(['--topology=ha', '--faults=redis-master,postgres-primary,matcher#1']),
    ).toMatchObject({
      ok: true,
      args: { faults: ['redis-master', 'postgres-primary', 'matcher#1'] },
    });
  });

  it('refuses a fault of the other topology and an unknown topology, naming what is known', () => {
    expect(parseChaosArgs(['--topology=ha', '--faults=redis'])).toEqual({
      ok: false,
      problem: `--faults: unknown fault "redis" for the ha topology (known: ${HA_FAULTS.join(', ')})`,
    });
    expect(parseChaosArgs(['--faults=postgres-primary'])).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/^--faults: unknown fault "postgres-primary" for the default/),
    });
    expect(parseChaosArgs(['--topology=cluster'])).toEqual({
      ok: false,
      problem: '--topology: unknown topology "cluster" (known: default, ha)',
    });
  });
});
