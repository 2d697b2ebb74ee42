import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { parse } from 'yaml';
import {
  JoinCloseCode,
  NotificationCloseCode,
  NotificationErrorCode,
  ResyncReason,
} from '@matchplane/contracts';

const ROOT = path.resolve(__dirname, '../..');

interface Payload {
  properties: Record<string, { const?: string; enum?: string[] }>;
}
interface AsyncApi {
  asyncapi: string;
  channels: Record<string, { 'x-close-codes': Record<string, { name: string }> }>;
  components: { messages: Record<string, { name: string; payload: Payload }> };
}

const document = parse(readFileSync(path.join(ROOT, 'docs/asyncapi.yaml'), 'utf8')) as AsyncApi;

/** Every string literal a `type` property takes in a contract file (`type: 'ready'`, ...). */
function messageTypesOf(file: string): string[] {
  const source = ts.createSourceFile(
    file,
    readFileSync(path.join(ROOT, file), 'utf8'),
    ts.ScriptTarget.Latest,
  );
  const types: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      ts.isPropertySignature(node) &&
      node.name.getText(source) === 'type' &&
      node.type &&
      ts.isLiteralTypeNode(node.type) &&
      ts.isStringLiteral(node.type.literal)
    ) {
      types.push(node.type.literal.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return types;
}

/** The close codes a channel documents, as name -> code. */
function closeCodesOf(channel: string): Record<string, number> {
  const codes = document.channels[channel]?.['x-close-codes'] ?? {};
  return Object.fromEntries(Object.entries(codes).map(([code, { name }]) => [name, Number(code)]));
}

/** docs/asyncapi.yaml cannot fall behind the protocols libs/contracts defines. */
describe('AsyncAPI document', () => {
  it('is AsyncAPI 2.6 with both socket channels', () => {
    expect(document.asyncapi).toBe('2.6.0');
    expect(Object.keys(document.channels).sort()).toEqual(['/join', '/v1/notifications']);
  });

  it.each([
    [
      'libs/contracts/src/notification-protocol.ts',
      ['ready', 'event', 'resync', 'error', 'resume'],
    ],
    ['libs/contracts/src/join-protocol.ts', ['join', 'joined', 'started', 'tick', 'ended']],
  ])('documents every message type of %s, with its fields', (file, known) => {
    const types = messageTypesOf(file);
    // The extraction itself works (it finds at least the types known today).
    expect(types).toEqual(expect.arrayContaining(known));
    for (const type of types) {
      const message = document.components.messages[type];
      expect(message?.payload.properties.type?.const).toBe(type);
    }
  });

  it('documents every close code of both protocols, with its number', () => {
    expect(closeCodesOf('/v1/notifications')).toEqual({ ...NotificationCloseCode });
    expect(closeCodesOf('/join')).toEqual({ ...JoinCloseCode });
  });

  it('documents every resync reason and socket error code', () => {
    const payloadOf = (name: string) => document.components.messages[name]?.payload.properties;
    expect(payloadOf('resync')?.reason?.enum?.sort()).toEqual(Object.values(ResyncReason).sort());
    expect(payloadOf('error')?.code?.enum?.sort()).toEqual(
      Object.values(NotificationErrorCode).sort(),
    );
  });
});
