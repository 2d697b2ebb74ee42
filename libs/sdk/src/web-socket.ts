/*
 * The SDK's two WebSockets (notifications, game server join) go through a connector, so the main
 * entry runs where the platform has a WebSocket of its own (browsers, Node >= 22) and Node 20
 * plugs in `ws` through `@matchplane/sdk/node`. Nothing here imports a Node module.
 */

/** An open (or opening) connection as the SDK drives it. */
export interface SdkSocket {
  /** Whether messages can be sent now. */
  readonly open: boolean;
  send(text: string): void;
  /** Closes with the WebSocket handshake; nothing when already closing or closed. */
  close(code?: number, reason?: string): void;
  /** Drops the connection without a handshake (it is dead); `close` is still reported. */
  terminate(): void;
}

/** What a connector reports, each at most once per event except `message` and `ping`. */
export interface SdkSocketEvents {
  open(): void;
  /** A text frame, or a binary one decoded as UTF-8. */
  message(text: string): void;
  /** A server ping, where the platform shows them (`ws` does, browsers do not). */
  ping(): void;
  error(error: Error): void;
  close(code: number, reason: string): void;
}

export interface SdkSocketRequest {
  url: string;
  protocols?: readonly string[];
  /**
   * A session token for the server: as an `Authorization` header where the platform can set one,
   * else as the `bearerSubprotocol` (browsers cannot set WebSocket headers).
   */
  bearer?: { token: string; subprotocol: string };
}

/** Opens SDK sockets on one platform: `browserWebSocket`, or `nodeWebSocket` from `@matchplane/sdk/node`. */
export interface WebSocketConnector {
  /** Whether `ping` events arrive: idle detection counts on them only then. */
  readonly reportsPings: boolean;
  connect(request: SdkSocketRequest, events: SdkSocketEvents): SdkSocket;
}

/** The WHATWG WebSocket, as much of it as the browser connector uses. */
interface PlatformWebSocket {
  readonly readyState: number;
  binaryType: string;
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onerror: ((event: unknown) => void) | null;
  onclose: ((event: { code: number; reason: string }) => void) | null;
  send(data: string): void;
  close(code?: number, reason?: string): void;
}
type PlatformWebSocketClass = new (url: string, protocols?: string[]) => PlatformWebSocket;

const OPEN = 1;
const CLOSING = 2;

function platformWebSocket(): PlatformWebSocketClass | undefined {
  return (globalThis as { WebSocket?: PlatformWebSocketClass }).WebSocket;
}

/** The platform's own WebSocket (`globalThis.WebSocket`): browsers, Deno, Node >= 22. */
export const browserWebSocket: WebSocketConnector = {
  reportsPings: false,
  connect(request, events) {
    const Platform = platformWebSocket();
    if (!Platform) throw new Error('this platform has no global WebSocket');
    const protocols = [...(request.protocols ?? [])];
    if (request.bearer) protocols.push(request.bearer.subprotocol);
    const socket = new Platform(request.url, protocols);
    socket.binaryType = 'arraybuffer';
    let closed = false;
    const reportClose = (code: number, reason: string): void => {
      if (closed) return;
      closed = true;
      events.close(code, reason);
    };
    socket.onopen = () => events.open();
    socket.onmessage = ({ data }) =>
      events.message(
        typeof data === 'string' ? data : new TextDecoder().decode(data as ArrayBuffer),
      );
    socket.onerror = () => events.error(new Error(`WebSocket error on ${request.url}`));
    socket.onclose = ({ code, reason }) => reportClose(code, reason);
    const close = (code?: number, reason?: string): void => {
      if (socket.readyState < CLOSING) socket.close(code, reason);
    };
    return {
      get open() {
        return socket.readyState === OPEN;
      },
      send: (text) => socket.send(text),
      close,
      // A browser has no abort: close, and report it now rather than after a dead peer's timeout.
      terminate: () => {
        close(4000, 'terminated');
        reportClose(1006, 'terminated');
      },
    };
  },
};

let installed: WebSocketConnector | undefined;

/**
 * Makes `connector` the default of every client and subscriber created without a `webSocket`
 * option. `@matchplane/sdk/node` installs `nodeWebSocket` when loaded.
 */
export function installWebSocket(connector: WebSocketConnector | undefined): void {
  installed = connector;
}

/** The installed connector, else the platform's WebSocket; throws where there is neither. */
export function defaultWebSocket(): WebSocketConnector {
  if (installed) return installed;
  if (platformWebSocket()) return browserWebSocket;
  throw new Error(
    "this platform has no global WebSocket: on Node 20 load '@matchplane/sdk/node' (or pass its nodeWebSocket as the webSocket option)",
  );
}
