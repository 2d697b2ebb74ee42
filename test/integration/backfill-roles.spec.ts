import {
  ServerRoutes,
  SERVER_PROTOCOL_VERSION,
  type BackfillResponse,
  type ServerHandOff,
  type TicketResponse,
} from '@matchplane/contracts';
import {
  commitMatch,
  queuePlayers,
  serverCall,
  waitForHandOff,
} from '../support/allocation-harness';
import { startBackfillPlane, type BackfillPlane } from '../support/backfill-plane';

const ENV = {
  QUEUE_MODES: 'duel:1x2,arena:2x2',
  MATCH_MIN_CONNECTED_PER_TEAM: '1',
  QUEUE_MODE_ATTRIBUTES: JSON.stringify({
    arena: {
      attributes: { roles: { type: 'set', values: ['healer', 'dps'], default: ['dps'] } },
      rules: [{ roles: 'roles', perTeam: { healer: 1 }, optionalAfterSeconds: 600 }],
    },
  }),
};

/*
 * Backfill by role (issue 34 mode shapes) through the production path: an arena match (a healer
 * a team) whose team 1 healer never connects; its server asks for the place; the request records
 * the healer as the team's open role, and the real matcher fills it with a younger healer rather
 * than an older player who cannot heal.
 */
describe('backfill by role', () => {
  let plane: BackfillPlane;
  beforeAll(async () => {
    plane = await startBackfillPlane(ENV, { servers: 2, firstPort: 7800 });
  });
  afterAll(() => plane?.close());

  const call = (given: ServerHandOff, route: string, body?: unknown) =>
    serverCall(plane.api, 'POST', route, given.credential, body);

  it("fills a team's lost healer with a healer, passing over an older player who cannot heal", async () => {
    const { api, handOff, matcher } = plane;
    // Team 0: healer, dps; team 1: healer (the no-show), dps.
    const roles = [['healer'], ['healer'], ['dps'], ['dps']];
    const players = await queuePlayers(api, 4, 'arena', undefined, (i) => ({ roles: roles[i] }));
    const matchId = await commitMatch(api, players, 'arena');
    const given = await waitForHandOff(handOff, matchId);
    await call(given, ServerRoutes.register(given.serverId), {
      protocolVersion: SERVER_PROTOCOL_VERSION,
      imageDigest: 'sha256:test',
    });
    const connect = await call(given, ServerRoutes.initialConnect(given.serverId), {
      connectedPlayerIds: players.filter((_, i) => i !== 1).map((p) => p.playerId),
    });
    expect(connect.json()).toMatchObject({ state: 'IN_PROGRESS' });
    const opened = await call(given, ServerRoutes.backfills(given.serverId), { team: 1, slots: 1 });
    expect(opened.statusCode).toBe(201);
    const request = opened.json<BackfillResponse>();
    const [stored] = await api.ds.query<{ open_roles: string[] }[]>(
      `SELECT open_roles FROM backfill_requests WHERE id = $1`,
      [request.requestId],
    );
    expect(stored?.open_roles).toEqual(['healer']);

    const [dps] = await queuePlayers(api, 1, 'arena', undefined, () => ({ roles: ['dps'] }));
    const [healer] = await queuePlayers(api, 1, 'arena', undefined, () => ({ roles: ['healer'] }));
    const pass = (await matcher.loop.passNow('arena'))!;
    expect(pass.backfilled).toEqual([
      expect.objectContaining({ requestId: request.requestId, matchId }),
    ]);
    const ticketOf = async (player: typeof dps) =>
      (
        await api.request('GET', `/v1/queue/tickets/${player!.ticket.id}`, { token: player!.token })
      ).json<TicketResponse>();
    expect(await ticketOf(healer)).toMatchObject({ state: 'MATCHED', matchId });
    expect((await ticketOf(dps)).state).toBe('SEARCHING');
  });
});
