import { createHmac, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable, Module, type DynamicModule } from '@nestjs/common';
import { IsString, IsUrl, MinLength } from 'class-validator';
import { EnvVar, IsIntInRange } from '@matchplane/config';
import { MATCH_STATE_CHANGED } from '@matchplane/domain';
import {
  PermanentDeliveryError,
  SubscribesTo,
  type OutboxEnvelope,
  type OutboxSubscriber,
} from '@matchplane/outbox';

/*
 * Example (docs/EXTENDING.md "A new outbox subscriber"): every match state change POSTed to the
 * studio's backend, signed so the backend can tell it came from Matchplane and was not replayed.
 * The dispatcher calls it inside delivery, so the backend receives a match's changes in revision
 * order, at least once; the outbox retries a failure and dead-letters what cannot be delivered.
 */

export const WEBHOOK_SIGNATURE_HEADER = 'matchplane-signature';
export const WEBHOOK_TIMESTAMP_HEADER = 'matchplane-timestamp';
/** `<aggregateId>:<revision>`: the receiver's dedupe key (delivery is at least once). */
export const WEBHOOK_DELIVERY_HEADER = 'matchplane-delivery';

/** The studio's own settings, validated at start-up like every Matchplane config class. */
export class StudioWebhookConfig {
  @EnvVar({ description: 'Studio webhook: URL every match state change is POSTed to' })
  @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true })
  STUDIO_WEBHOOK_URL = '';

  @EnvVar({
    description: 'Studio webhook: HMAC-SHA256 key shared with the receiver (32+ characters)',
    secret: true,
  })
  @IsString()
  @MinLength(32)
  STUDIO_WEBHOOK_SECRET = '';

  @EnvVar({
    description:
      'Studio webhook: how long one POST may take (ms); keep it far below OUTBOX_CLAIM_LEASE_MS',
  })
  @IsIntInRange(100, 30_000)
  STUDIO_WEBHOOK_TIMEOUT_MS = 5_000;
}

/** What the receiver gets: the envelope as JSON. */
export interface StudioWebhookBody {
  readonly deliveryId: string;
  readonly event: string;
  readonly aggregateType: string;
  readonly aggregateId: string;
  readonly revision: number;
  readonly occurredAt: string;
  readonly playerIds: readonly string[];
  readonly payload: OutboxEnvelope['payload'];
}

/** `sha256=<hex>` over `<timestamp>.<body>`: the timestamp is signed so it cannot be swapped. */
export function webhookSignature(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/**
 * The receiver's check (the studio's backend runs this): the signature over the raw body bytes
 * as received, compared in constant time, and a timestamp within `toleranceMs` so a captured
 * request cannot be replayed later.
 */
export function verifyWebhook(
  secret: string,
  request: { body: string; timestamp: string | undefined; signature: string | undefined },
  now = Date.now(),
  toleranceMs = 5 * 60_000,
): boolean {
  const { body, timestamp, signature } = request;
  if (timestamp === undefined || signature === undefined || !/^\d{1,15}$/.test(timestamp)) {
    return false;
  }
  if (Math.abs(now - Number(timestamp)) > toleranceMs) return false;
  const expected = Buffer.from(webhookSignature(secret, timestamp, body));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

@Injectable()
@SubscribesTo(MATCH_STATE_CHANGED)
export class StudioWebhookSubscriber implements OutboxSubscriber {
  /** Only the origin goes into errors: last_error is stored and logged, and a URL may hold a token. */
  private readonly origin: string;

  constructor(@Inject(StudioWebhookConfig) private readonly config: StudioWebhookConfig) {
    this.origin = new URL(config.STUDIO_WEBHOOK_URL).origin;
  }

  async handle(envelope: OutboxEnvelope): Promise<void> {
    const revision = Number(envelope.revision);
    const deliveryId = `${envelope.aggregateId}:${revision}`;
    const message: StudioWebhookBody = {
      deliveryId,
      event: envelope.event,
      aggregateType: envelope.aggregateType,
      aggregateId: envelope.aggregateId,
      revision,
      occurredAt: envelope.occurredAt.toISOString(),
      playerIds: envelope.playerIds,
      payload: envelope.payload,
    };
    const body = JSON.stringify(message);
    // Signed per attempt: a retry hours later must still pass the receiver's freshness check.
    const timestamp = String(Date.now());
    let response: Response;
    try {
      response = await fetch(this.config.STUDIO_WEBHOOK_URL, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [WEBHOOK_TIMESTAMP_HEADER]: timestamp,
          [WEBHOOK_SIGNATURE_HEADER]: webhookSignature(
            this.config.STUDIO_WEBHOOK_SECRET,
            timestamp,
            body,
          ),
          [WEBHOOK_DELIVERY_HEADER]: deliveryId,
        },
        body,
        // A redirect would re-send the signed body somewhere unconfigured.
        redirect: 'error',
        signal: AbortSignal.timeout(this.config.STUDIO_WEBHOOK_TIMEOUT_MS),
      });
    } catch (error) {
      // Network failure or timeout: worth retrying (the outbox backs off, then dead-letters).
      const why = error instanceof Error ? error.name : 'unknown error';
      throw new Error(`webhook ${this.origin} unreachable (${why}) for ${deliveryId}`);
    }
    await response.body?.cancel();
    if (response.ok) return;
    const status = response.status;
    // 408 and 429 say "later"; any other 4xx says this request will never be accepted.
    if (status >= 400 && status < 500 && status !== 408 && status !== 429) {
      throw new PermanentDeliveryError(`webhook ${this.origin} refused ${deliveryId}: ${status}`);
    }
    throw new Error(`webhook ${this.origin} answered ${status} for ${deliveryId}`);
  }
}

/** The studio's module, handed to `DispatcherModule.forRoot(config, [StudioWebhookModule.register(...)])`. */
@Module({})
export class StudioWebhookModule {
  static register(config: StudioWebhookConfig): DynamicModule {
    return {
      module: StudioWebhookModule,
      providers: [{ provide: StudioWebhookConfig, useValue: config }, StudioWebhookSubscriber],
    };
  }
}
