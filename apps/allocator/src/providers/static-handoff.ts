import { Inject, Injectable } from '@nestjs/common';
import { AllocatorConfig } from '@matchplane/config';
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

@Injectable()
export class HttpStaticHandOff extends StaticHandOff {
  private readonly template: string;

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
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(handOff),
      signal: AbortSignal.timeout(5_000),
    });
    // The URL, not the body: the body carries the credential.
    if (!response.ok)
      throw new Error(`hand-off to server ${server.id} at ${url} answered ${response.status}`);
  }
}
