import { ApiConfig } from '../../api.config';
import { ConsoleSessions, cookieValue, sessionCookie } from './console-session';

const ALICE = 'alice-token-0123456789abcdefghijklmnop';

function sessions(overrides: Partial<ApiConfig> = {}): ConsoleSessions {
  return new ConsoleSessions(
    Object.assign(new ApiConfig(), {
      OPERATOR_TOKENS: `alice=${ALICE}`,
      OPERATOR_CONSOLE_SESSION_SECONDS: 600,
      ...overrides,
    }),
  );
}

describe(ConsoleSessions.name, () => {
  const now = new Date('2026-01-31T12:00:00Z');

  it('names the operator a token belongs to, and no one for another token', () => {
    expect(sessions().operatorOf(ALICE)).toBe('alice');
    expect(sessions().operatorOf(`${ALICE}x`)).toBeUndefined();
  });

  it('verifies a cookie it issued until it expires', () => {
    const console = sessions();
    const cookie = console.issue('alice', now);
    expect(console.verify(cookie, now)).toMatchObject({
      operator: 'alice',
      expiresAt: new Date('2026-01-31T12:10:00Z'),
    });
    expect(console.verify(cookie, new Date('2026-01-31T12:09:59Z'))).toBeDefined();
    expect(console.verify(cookie, new Date('2026-01-31T12:10:00Z'))).toBeUndefined();
  });

  it('refuses a cookie whose claims were changed, signed with another key, or malformed', () => {
    const console = sessions();
    const [version, claims, mac] = console.issue('alice', now).split('.');
    const asBob = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(claims!, 'base64url').toString()), o: 'bob' }),
    ).toString('base64url');
    const otherKey = sessions({ OPERATOR_CONSOLE_SECRET: 'another-secret-0123456789abcdefghijkl' });
    for (const forged of [
      `${version}.${asBob}.${mac}`,
      otherKey.issue('alice', now),
      `${version}.${claims}`,
      'v2.x.y',
      '',
    ]) {
      expect(console.verify(forged, now)).toBeUndefined();
    }
  });

  it('ends the sessions of an operator who is no longer configured', () => {
    const cookie = sessions({
      OPERATOR_CONSOLE_SECRET: 'shared-secret-0123456789abcdefghijklm',
    }).issue('alice', now);
    const without = sessions({
      OPERATOR_CONSOLE_SECRET: 'shared-secret-0123456789abcdefghijklm',
      OPERATOR_TOKENS: `bob=${ALICE}`,
    });
    expect(without.verify(cookie, now)).toBeUndefined();
  });

  it("accepts only the session's own CSRF token, which differs between sessions", () => {
    const console = sessions();
    const first = console.verify(console.issue('alice', now), now)!;
    const second = console.verify(console.issue('alice', now), now)!;
    expect(first.csrfToken).not.toBe(second.csrfToken);
    expect(console.csrfMatches(first, first.csrfToken)).toBe(true);
    expect(console.csrfMatches(first, second.csrfToken)).toBe(false);
    expect(console.csrfMatches(first, undefined)).toBe(false);
  });

  it('writes an HttpOnly, SameSite=Strict cookie scoped to /admin, and reads it back', () => {
    expect(sessionCookie('v1.a.b', 600, true)).toBe(
      'matchplane_console=v1.a.b; Path=/admin; Max-Age=600; HttpOnly; SameSite=Strict; Secure',
    );
    expect(sessionCookie(undefined, 600, false)).toBe(
      'matchplane_console=; Path=/admin; Max-Age=0; HttpOnly; SameSite=Strict',
    );
    expect(cookieValue('a=1; matchplane_console=v1.a.b; c=3', 'matchplane_console')).toBe('v1.a.b');
    expect(cookieValue(undefined, 'matchplane_console')).toBeUndefined();
  });
});
