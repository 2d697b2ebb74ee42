import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { AllocatorConfig } from '../allocator.config';
import type { ServerHandOff } from '@matchplane/contracts';
import type { StaticServer } from '@matchplane/allocation';

/**
 * How a pooled server learns its match and credential (DI token). The default POSTs the
 * contract's ServerHandOff JSON to STATIC_HANDOFF_URL; tests and studios with their own
 * fleet agent provide another.
 */
export abstract class StaticHandOff {
  abstract deliver(server: StaticServer, handOff: ServerHandOff): Promise<void>;
}

const HAND_OFF_TIMEOUT_MS = 5_000;

class StaleConnectionError extends Error {}

/**
 * node:http over keep-alive agents rather than fetch: a burst hands off hundreds of matches a
 * second, and fetch's per-request cost (web streams, abort signals) was the allocator's largest
 * CPU item after PostgreSQL's.
 */
@Injectable()
export class HttpStaticHandOff extends StaticHandOff implements OnApplicationShutdown {
  private readonly template: string;
  private readonly http = new HttpAgent({ keepAlive: true });
  private readonly https = new HttpsAgent({ keepAlive: true });

  constructor(@Inject(AllocatorConfig) config: AllocatorConfig) {
    super();
    if (!config.STATIC_HANDOFF_URL)
      throw new Error('STATIC_HANDOFF_URL is required for the static provider');
    this.template = config.STATIC_HANDOFF_URL;
  }

  async deliver(server: StaticServer, handOff: ServerHandOff): Promise<void> {
    const url = this.template
      .replaceAll('{id}', encodeURIComponent(server.id))
      .replaceAll('{host}', server.host)
      .replaceAll('{port}', String(server.port));
    const target = new URL(url);
    const body = JSON.stringify(handOff);
    const status = await this.post(target, body).catch((error: unknown) => {
      // A kept-alive connection the server closed meanwhile: once more on a fresh one (a hand-off
      // may be repeated: libs/contracts ServerHandOff).
      if (error instanceof StaleConnectionError) return this.post(target, body);
      throw error;
    });
    // The URL, not the body: the body carries the credential.
    if (status < 200 || status >= 300)
      throw new Error(`hand-off to server ${server.id} at ${url} answered ${status}`);
  }

  onApplicationShutdown(): void {
    this.http.destroy();
    this.https.destroy();
  }

  /** POSTs `body` as JSON; the response status once the response has been read. */
  private post(url: URL, body: string): Promise<number> {
    const secure = url.protocol === 'https:';
    return new Promise((resolve, reject) => {
      const request = (secure ? httpsRequest : httpRequest)(
        url,
        {
          method: 'POST',
          agent: secure ? this.https : this.http,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
          },
          timeout: HAND_OFF_TIMEOUT_MS,
        },
        (response) => {
          // Drained, so the connection goes back to the agent.
          response.resume();
          response.once('end', () => resolve(response.statusCode ?? 0));
          response.once('error', reject);
        },
      );
      request.once('timeout', () =>
        request.destroy(new Error(`no answer within ${HAND_OFF_TIMEOUT_MS} ms`)),
      );
      request.once('error', (error: NodeJS.ErrnoException) => {
        const message = `hand-off POST to ${url.origin}${url.pathname} failed: ${error.message}`;
        reject(
          request.reusedSocket && error.code === 'ECONNRESET'
            ? new StaleConnectionError(message)
            : new Error(message),
        );
      });
      request.end(body);
    });
  }
}
