import WebSocket, { type RawData } from 'ws';
import type { WebSocketConnector } from './web-socket';

/**
 * Sockets from the `ws` package, for Node 20 (no global WebSocket): the session token goes in an
 * `Authorization` header rather than a subprotocol, and the server's pings are seen (idle
 * detection).
 */
export const nodeWebSocket: WebSocketConnector = {
  reportsPings: true,
  connect(request, events) {
    const headers = request.bearer ? { authorization: `Bearer ${request.bearer.token}` } : {};
    const socket = new WebSocket(request.url, [...(request.protocols ?? [])], { headers });
    socket.on('open', () => events.open());
    socket.on('message', (data: RawData) => events.message(utf8(data)));
    socket.on('ping', () => events.ping());
    socket.on('error', (error: Error) => events.error(error));
    socket.on('close', (code: number, reason: Buffer) => events.close(code, reason.toString()));
    return {
      get open() {
        return socket.readyState === WebSocket.OPEN;
      },
      send: (text) => socket.send(text),
      close: (code, reason) => {
        if (socket.readyState === WebSocket.CLOSING || socket.readyState === WebSocket.CLOSED)
          return;
        socket.close(code, reason);
      },
      terminate: () => socket.terminate(),
    };
  },
};

function utf8(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data instanceof ArrayBuffer ? new Uint8Array(data) : data).toString('utf8');
}
