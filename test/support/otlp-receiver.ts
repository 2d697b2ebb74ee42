import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/** One exported span, flattened from OTLP/HTTP JSON (ids in hex, as OTLP JSON writes them). */
export interface ReceivedSpan {
  service: string;
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  kind: number;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string }[];
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
  arrayValue?: { values?: OtlpValue[] };
}

interface OtlpKeyValue {
  key: string;
  value: OtlpValue;
}

interface OtlpTraceRequest {
  resourceSpans?: {
    resource?: { attributes?: OtlpKeyValue[] };
    scopeSpans?: {
      spans?: {
        name: string;
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        kind?: number;
        attributes?: OtlpKeyValue[];
        links?: { traceId: string; spanId: string }[];
      }[];
    }[];
  }[];
}

function valueOf(value: OtlpValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(valueOf);
  return undefined;
}

function attributesOf(list: readonly OtlpKeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, valueOf(value)]));
}

async function bodyOf(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  return request.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body;
}

/**
 * A minimal OTLP/HTTP trace receiver (JSON encoding, POST /v1/traces) for tests: it keeps every
 * span the apps export, so a test can follow a trace across processes.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  readonly problems: string[] = [];
  private readonly server: Server;

  private constructor() {
    this.server = createServer((request, response) => {
      bodyOf(request)
        .then((body) => {
          if (request.method !== 'POST' || request.url !== '/v1/traces') {
            this.problems.push(`${request.method} ${request.url}`);
            response.writeHead(404).end();
            return;
          }
          this.collect(JSON.parse(body.toString('utf8')) as OtlpTraceRequest);
          response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        })
        .catch((error: unknown) => {
          this.problems.push(String(error));
          response.writeHead(400).end();
        });
    });
  }

  static async start(): Promise<OtlpReceiver> {
    const receiver = new OtlpReceiver();
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  /** The base URL to give as OTEL_EXPORTER_OTLP_ENDPOINT. */
  get endpoint(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  find(predicate: (span: ReceivedSpan) => boolean): ReceivedSpan | undefined {
    return this.spans.find(predicate);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private collect(request: OtlpTraceRequest): void {
    for (const resourceSpans of request.resourceSpans ?? []) {
      const service = String(attributesOf(resourceSpans.resource?.attributes)['service.name']);
      for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
        for (const span of scopeSpans.spans ?? []) {
          this.spans.push({
            service,
            name: span.name,
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId ?? '',
            kind: span.kind ?? 0,
            attributes: attributesOf(span.attributes),
            links: (span.links ?? []).map(({ traceId, spanId }) => ({ traceId, spanId })),
          });
        }
      }
    }
  }
}
