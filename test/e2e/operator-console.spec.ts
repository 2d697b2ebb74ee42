import { createHmac } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { readyPlayer, useControlPlane, type JourneyPlayer } from '../support/journey';
import { REPO_ROOT, waitFor } from '../support/processes';
import { testRedis } from '../support/redis';

/*
 * The operator console in a real headless browser (Debian's chromium through playwright-core)
 * against the control plane as processes. The dead letters are made by the dispatcher's real
 * allocation-trigger subscriber failing against a broken allocation queue (its BullMQ meta key
 * holds a string: every add answers WRONGTYPE); after the operator repairs the queue, a replay
 * from the console is delivered and the allocator picks the match up.
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** The README's pictures are refreshed with CONSOLE_SCREENSHOTS_DIR=docs/img; a plain run keeps the checkout clean. */
const SCREENSHOTS = process.env.CONSOLE_SCREENSHOTS_DIR
  ? path.resolve(REPO_ROOT, process.env.CONSOLE_SCREENSHOTS_DIR)
  : path.join(tmpdir(), 'matchplane-console-screenshots');
const OPERATOR = { name: 'ops-alice', token: 'alice-console-token-0123456789abcdefghij' };

describe('operator console in a headless browser', () => {
  const plane = useControlPlane({
    apis: 1,
    env: {
      OPERATOR_TOKENS: `${OPERATOR.name}=${OPERATOR.token}`,
      MAX_OUTBOX_DELIVERY_ATTEMPTS: '2',
      OUTBOX_RETRY_BASE_MS: '100',
      OUTBOX_RETRY_CAP_MS: '200',
    },
  });
  const players: JourneyPlayer[] = [];
  const redis = testRedis();
  let browser: Browser;
  let page: Page;
  let base: string;
  let deadIds: string[] = [];
  let matchIds: string[] = [];
  /** Which console players each match took (four players make two matches, in any pairing). */
  const playersByMatch = new Map<string, JourneyPlayer[]>();

  const metaKey = () => `${plane.prefix}:allocation:meta`;

  async function screenshot(name: string): Promise<void> {
    await page.screenshot({ path: path.join(SCREENSHOTS, `console-${name}.png`), fullPage: true });
  }

  /** Reloads `url` until `selector` shows `text` (the console has no script that would refresh). */
  async function reloadUntil(url: string, selector: string, text: string | RegExp): Promise<void> {
    await waitFor(
      async () => {
        await page.goto(url);
        const content = await page.locator(selector).allInnerTexts();
        return content.some((item) =>
          typeof text === 'string' ? item.includes(text) : text.test(item),
        )
          ? true
          : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 300, what: `${text} in ${selector} of ${url}` },
    );
  }

  async function sessionCookie(): Promise<string> {
    const cookie = (await page.context().cookies()).find((c) => c.name === 'matchplane_console');
    if (!cookie) throw new Error('no console cookie in the browser');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/admin' });
    return cookie.value;
  }

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  });

  afterAll(async () => {
    for (const player of players) player.close();
    await browser?.close();
    redis.disconnect();
  });

  it('sends a visitor without a session to the login form, and refuses a wrong token', () =>
    plane.diagnose(async () => {
      base = plane.apiUrl(0);
      const bare = await fetch(`${base}/admin/dead-letters`, { redirect: 'manual' });
      expect(bare.status).toBe(303);
      expect(bare.headers.get('location')).toBe('/admin/login');

      await page.goto(`${base}/admin`);
      expect(new URL(page.url()).pathname).toBe('/admin/login');
      await page.fill('input[name=token]', 'not-an-operator-token-0000000000000000');
      await page.click('main form button');
      await expect(page.locator('.error').innerText()).resolves.toContain('not an operator token');
      await page.fill('input[name=token]', '');
      await screenshot('login');
    }));

  it('logs in, then finds the dead letters a failing subscriber left', () =>
    plane.diagnose(async () => {
      // Break the allocation queue while the allocator is away (its worker would trip on it too).
      await plane.allocator!.stop();
      await redis.del(metaKey());
      await redis.set(metaKey(), 'not a hash');

      const queued = await Promise.all(
        ['a', 'b', 'c', 'd'].map((name) => readyPlayer(plane.apiUrl(0), `${name}@console`)),
      );
      players.push(...queued);
      for (const player of queued) await player.enqueue();
      const matchOfPlayer = await Promise.all(queued.map((player) => player.waitForMatch()));
      matchOfPlayer.forEach((matchId, index) =>
        playersByMatch.set(matchId, [...(playersByMatch.get(matchId) ?? []), queued[index]!]),
      );
      matchIds = [...playersByMatch.keys()];
      expect(matchIds).toHaveLength(2);

      await page.goto(`${base}/admin/login`);
      await page.fill('input[name=token]', OPERATOR.token);
      await page.click('main form button');
      expect(new URL(page.url()).pathname).toBe('/admin');
      await sessionCookie();

      await reloadUntil(`${base}/admin/dead-letters`, 'table', 'WRONGTYPE');
      await reloadUntil(`${base}/admin`, '[data-metric=dead]', '2');
      await screenshot('outbox');

      await page.goto(`${base}/admin/dead-letters?event=match.state_changed`);
      const links = page.locator('tbody tr td:first-child a');
      await expect(links.count()).resolves.toBe(2);
      deadIds = (await links.allInnerTexts()).map((text) => text.replace('#', ''));
      await expect(page.locator('tbody').innerText()).resolves.toContain(matchIds[0]!.slice(0, 8));
      await screenshot('dead-letters');
    }));

  it('refuses a console request without a cookie, with a forged cookie, and a replay without the CSRF token', () =>
    plane.diagnose(async () => {
      const cookie = await sessionCookie();
      const [version, claims, mac] = cookie.split('.');
      const asAnother = Buffer.from(
        JSON.stringify({
          ...JSON.parse(Buffer.from(claims!, 'base64url').toString()),
          o: 'mallory',
        }),
      ).toString('base64url');
      const forged = [
        `${version}.${asAnother}.${mac}`,
        `${version}.${claims}.${createHmac('sha256', 'a guessed key').update(`session.${claims}`).digest('base64url')}`,
      ];
      for (const value of forged) {
        const response = await fetch(`${base}/admin/dead-letters/${deadIds[0]}`, {
          headers: { cookie: `matchplane_console=${value}` },
          redirect: 'manual',
        });
        expect(response.status).toBe(303);
        expect(response.headers.get('location')).toBe('/admin/login');
        expect(response.headers.get('set-cookie')).toMatch(/^matchplane_console=; .*Max-Age=0/);
      }
      const queues = await fetch(`${base}/admin/queues`, { redirect: 'manual' });
      expect(queues.status).toBe(303);

      for (const body of ['reason=sneaky', 'reason=sneaky&_csrf=not-the-token']) {
        const replay = await fetch(`${base}/admin/dead-letters/${deadIds[0]}/replay`, {
          method: 'POST',
          headers: {
            cookie: `matchplane_console=${cookie}`,
            'content-type': 'application/x-www-form-urlencoded',
          },
          body,
          redirect: 'manual',
        });
        expect(replay.status).toBe(403);
        expect(await replay.text()).toContain('CSRF');
      }
      await page.goto(`${base}/admin/dead-letters/${deadIds[0]}`);
      await expect(page.locator('[data-status]').innerText()).resolves.toBe('dead');
    }));

  it('shows a dead letter with its envelope and attempts, replays it after the repair and sees it delivered', () =>
    plane.diagnose(async () => {
      const id = deadIds[0]!;
      await page.goto(`${base}/admin/dead-letters/${id}`);
      await expect(page.locator('pre').innerText()).resolves.toContain(
        '"event": "match.state_changed"',
      );
      await expect(page.locator('table').first().innerText()).resolves.toContain('WRONGTYPE');
      await screenshot('dead-letter');

      await redis.del(metaKey());
      await plane.allocator!.start();
      await page.fill('form[action$="/replay"] input[name=reason]', 'allocation queue repaired');
      await page.click('form[action$="/replay"] button');
      await expect(page.locator('.notice').innerText()).resolves.toContain(`Replayed #${id}`);
      await reloadUntil(`${base}/admin/dead-letters/${id}`, '[data-status]', 'published');
      await expect(page.locator('table.audit').innerText()).resolves.toMatch(
        /ops-alice\s+outbox\.dead_letter\.replayed[\s\S]*allocation queue repaired/,
      );
    }));

  it('discards the other dead letter with a reason and shows it in the audit trail', () =>
    plane.diagnose(async () => {
      const id = deadIds[1]!;
      await page.goto(`${base}/admin/dead-letters/${id}`);
      await page.fill(
        'form[action$="/discard"] input[name=reason]',
        'duplicate of a repaired match',
      );
      await page.click('form[action$="/discard"] button');
      expect(new URL(page.url()).pathname).toBe('/admin/audit');
      await expect(page.locator('.notice').innerText()).resolves.toContain(`Discarded #${id}`);
      const firstRow = await page.locator('tbody tr').first().innerText();
      expect(firstRow).toContain('outbox.dead_letter.discarded');
      expect(firstRow).toContain('duplicate of a repaired match');
      expect(firstRow).toContain(OPERATOR.name);
      await screenshot('audit');
    }));

  it("opens the replayed match's timeline, participants and allocation", () =>
    plane.diagnose(async () => {
      const replayed = await page.goto(`${base}/admin/dead-letters/${deadIds[0]}`);
      expect(replayed?.status()).toBe(200);
      const matchLink = page.locator('dd a.mono').first();
      const matchId = await matchLink.innerText();
      expect(matchIds).toContain(matchId);

      await page.goto(`${base}/admin/lookup`);
      await page.fill('input[name=id]', matchId);
      await page.click('main form button');
      expect(new URL(page.url()).pathname).toBe(`/admin/matches/${matchId}`);
      // The replayed event reached the allocator: the match moved on from ALLOCATING.
      await reloadUntil(page.url(), 'table.timeline', 'PROCESS_READY');
      const timeline = await page.locator('table.timeline').innerText();
      expect(timeline).toMatch(/1\s+match\.state_changed\s+— → ALLOCATING/);
      expect(timeline).toMatch(/2\s+match\.state_changed\s+ALLOCATING → PROCESS_READY/);
      await expect(page.locator('dl.facts').innerText()).resolves.toMatch(
        /Allocation\s+local · server/,
      );
      const participants = await page.locator('table').last().innerText();
      const expected = playersByMatch.get(matchId)!;
      expect(expected).toHaveLength(2);
      for (const player of expected) expect(participants).toContain(player.playerId);
      await screenshot('match');
    }));

  it('cancels the match whose event was discarded from its page: its players are told and search again', () =>
    plane.diagnose(async () => {
      // The discarded event never reached the allocator: that match is still ALLOCATING.
      const [stuck] = await plane.ds.query<{ id: string }[]>(
        `SELECT id FROM matches WHERE id = ANY($1::uuid[]) AND state = 'ALLOCATING'`,
        [matchIds],
      );
      const matchId = stuck!.id;
      await page.goto(`${base}/admin/matches/${matchId}`);
      await page.fill('form[action$="/cancel"] input[name=reason]', 'stuck since the queue outage');
      await page.click('form[action$="/cancel"] button');
      expect(new URL(page.url()).pathname).toBe(`/admin/matches/${matchId}`);
      await expect(page.locator('.notice').innerText()).resolves.toContain(
        'Cancelled: 2 player(s) searching again',
      );
      await expect(page.locator('dl.facts .badge').innerText()).resolves.toBe('CANCELLED');
      await expect(page.locator('form[action$="/cancel"]').count()).resolves.toBe(0);
      await screenshot('match-cancelled');
      for (const player of playersByMatch.get(matchId)!) {
        await player.log.waitForState(matchId, 'CANCELLED');
        // Back in the queue with its place; it is matched again with its partner.
        await expect(player.waitForMatch()).resolves.not.toBe(matchId);
      }
    }));

  it("shows a queued player's ticket and why it is not matched yet", () =>
    plane.diagnose(async () => {
      const lonely = await readyPlayer(plane.apiUrl(0), 'lonely@console');
      players.push(lonely);
      await lonely.enqueue();
      await page.goto(`${base}/admin/lookup?id=${lonely.ticketId}`);
      expect(new URL(page.url()).pathname).toBe(`/admin/players/${lonely.playerId}`);
      await reloadUntil(page.url(), '[data-explanation]', /[A-Z_]+: /);
      // A new player holds openskill's prior: mu 25, sigma 25/3, shown as 1500.
      await expect(page.locator('[data-rating]').innerText()).resolves.toMatch(
        /^1500 \(mu 25\.00, sigma 8\.33\) · never rated$/,
      );
      await screenshot('player');
    }));

  it('shows the BullMQ queues through Bull Board behind the same session', () =>
    plane.diagnose(async () => {
      await page.goto(`${base}/admin/queues`);
      await page.getByText('allocation-release').first().waitFor({ timeout: 30_000 });
      await page.getByText('allocation', { exact: true }).first().waitFor({ timeout: 30_000 });
      await screenshot('queues');
    }));

  it('pauses a mode from the live-ops page: a new ticket is refused until it is resumed', () =>
    plane.diagnose(async () => {
      await page.goto(`${base}/admin/live-ops`);
      const duel = page.locator('tr[data-target="mode/duel"]');
      await expect(duel.locator('[data-state]').innerText()).resolves.toBe('OPEN');
      await duel.locator('input[name=reason]').fill('console rollout');
      await duel.locator('input[name=retryAfterSeconds]').fill('90');
      await duel.locator('button[value=pause]').click();
      await expect(
        page.locator('tr[data-target="mode/duel"] [data-state]').innerText(),
      ).resolves.toBe('PAUSED');
      await screenshot('live-ops');
      const late = await readyPlayer(plane.apiUrl(0), 'late@console');
      players.push(late);
      await expect(late.enqueue()).rejects.toMatchObject({
        status: 409,
        code: 'QUEUE_PAUSED',
        retryAfterSeconds: 90,
      });
      await page.locator('tr[data-target="mode/duel"] input[name=reason]').fill('done');
      await page.locator('tr[data-target="mode/duel"] button[value=resume]').click();
      await expect(
        page.locator('tr[data-target="mode/duel"] [data-state]').innerText(),
      ).resolves.toBe('OPEN');
      await expect(late.enqueue()).resolves.toMatchObject({ state: 'SEARCHING' });
    }));

  it('logs out: the cookie is cleared and the console asks for a login again', () =>
    plane.diagnose(async () => {
      const cookie = await sessionCookie();
      await page.goto(`${base}/admin`);
      await page.click('form.who button');
      expect(new URL(page.url()).pathname).toBe('/admin/login');
      expect((await page.context().cookies()).some((c) => c.name === 'matchplane_console')).toBe(
        false,
      );
      // The old value is still signed and unexpired: stateless sessions end by expiry, and this one is short.
      expect(cookie).toMatch(/^v1\./);
    }));
});
