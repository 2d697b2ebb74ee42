import { WebSocket } from 'ws';
import { JOIN_PATH, JoinCloseCode, type RosterResponse } from '@matchplane/contracts';
import { JoinTokenSigner, JoinTokenVerifier } from '@matchplane/join-auth';
import { newSignedRoster, newTestKeys } from './game-server.factories';
import { JoinListener, type PresenceReporter } from './join.listener';
import { RosterGate } from './roster.gate';

const SERVER_ID = 'gs-unit-rejoin';
const { keys } = newTestKeys('k1');
const signer = new JoinTokenSigner(keys, 'k1');

class RecordingPresence implements PresenceReporter {
  readonly calls: string[] = [];
  abandoned = new Set<string>();
  left(playerId: string): void {
    this.calls.push(`left ${playerId}`);
  }
  rejoined(playerId: string): Promise<boolean> {
    this.calls.push(`rejoined ${playerId}`);
    return Promise.resolve(!this.abandoned.has(playerId));
  }
}

interface Joined {
  socket: WebSocket;
  /** The first message, or the close code when the server refused. */
  answer: Promise<{ type?: string; team?: number } | { closed: number }>;
}

function join(port: number, token: string): Joined {
  const socket = new WebSocket(`ws://127.0.0.1:${port}${JOIN_PATH}`);
  socket.once('open', () => socket.send(JSON.stringify({ type: 'join', token })));
  const answer = new Promise<{ type?: string; team?: number } | { closed: number }>((resolve) => {
    socket.once('message', (data) =>
      resolve(JSON.parse((data as Buffer).toString('utf8')) as { type: string }),
    );
    socket.once('close', (code) => resolve({ closed: code }));
  });
  return { socket, answer };
}

const closed = (socket: WebSocket) =>
  new Promise<number>((resolve) => {
    if (socket.readyState === WebSocket.CLOSED) resolve(-1);
    socket.once('close', (code) => resolve(code));
  });
const until = async (test: () => boolean) => {
  for (let i = 0; i < 200 && !test(); i += 1) await new Promise((r) => setTimeout(r, 10));
};

describe(JoinListener.name, () => {
  let roster: RosterResponse;
  let listener: JoinListener;
  let presence: RecordingPresence;
  let port: number;

  beforeEach(async () => {
    roster = newSignedRoster({ signer, serverId: SERVER_ID, players: [{ team: 0 }, { team: 1 }] });
    const gate = new RosterGate(new JoinTokenVerifier(keys), {
      serverId: SERVER_ID,
      matchId: roster.matchId,
    });
    const check = gate.check(roster, Date.now());
    if (!check.ok) throw new Error(`fixture roster rejected: ${check.reason}`);
    presence = new RecordingPresence();
    listener = new JoinListener(gate, check.roster, {
      host: '127.0.0.1',
      port: 0,
      handshakeTimeoutMs: 1_000,
      presence,
    });
    port = (await listener.listen()).port;
  });
  afterEach(() => listener.close());

  /** Both players joined, the match started, joining closed. */
  async function playing(): Promise<Joined[]> {
    const joined = roster.entries.map((entry) => join(port, entry.joinToken));
    for (const player of joined) expect(await player.answer).toMatchObject({ type: 'joined' });
    listener.markStarted(60_000);
    listener.closeJoining();
    return joined;
  }

  it('reports a drop during the match as a leave and takes the player back on its team with a fresh token of its own', async () => {
    const [first] = await playing();
    const entry = roster.entries[0]!;
    first!.socket.close();
    await until(() => presence.calls.length === 1);
    expect(presence.calls).toEqual([`left ${entry.playerId}`]);
    expect(listener.connectedPlayerIds()).toEqual([roster.entries[1]!.playerId]);

    // A freshly signed token (the old one may have expired), as the assignment serves it.
    const fresh = newSignedRoster({
      signer,
      serverId: SERVER_ID,
      matchId: roster.matchId,
      endpoint: '127.0.0.1:7777',
      players: [{ team: 0, playerId: entry.playerId }],
    }).entries[0]!.joinToken;
    const back = join(port, fresh);
    expect(await back.answer).toEqual({
      type: 'joined',
      playerId: entry.playerId,
      team: entry.team,
    });
    expect(presence.calls).toEqual([`left ${entry.playerId}`, `rejoined ${entry.playerId}`]);
    expect(listener.connectedPlayerIds().sort()).toEqual(
      roster.entries.map((e) => e.playerId).sort(),
    );
    back.socket.close();
  });

  it('still refuses with 4410 a listed player who never joined once joining closed', async () => {
    const second = join(port, roster.entries[1]!.joinToken);
    expect(await second.answer).toMatchObject({ type: 'joined' });
    listener.markStarted(60_000);
    listener.closeJoining();
    const late = join(port, roster.entries[0]!.joinToken);
    expect(await late.answer).toEqual({ closed: JoinCloseCode.JOINING_CLOSED });
    expect(presence.calls).toEqual([]);
  });

  it('sends away with 4410 a rejoin the control plane says came too late (abandoned)', async () => {
    const [first] = await playing();
    const entry = roster.entries[0]!;
    presence.abandoned.add(entry.playerId);
    first!.socket.close();
    await until(() => presence.calls.length === 1);
    const back = join(port, entry.joinToken);
    expect(await back.answer).toMatchObject({ type: 'joined' });
    expect(await closed(back.socket)).toBe(JoinCloseCode.JOINING_CLOSED);
    expect(listener.connectedPlayerIds()).toEqual([roster.entries[1]!.playerId]);
  });

  it('does not report the connections it closes itself at the end as leaves', async () => {
    await playing();
    await listener.closeAll(JoinCloseCode.GOING_AWAY, 'match over');
    expect(presence.calls).toEqual([]);
  });
});
