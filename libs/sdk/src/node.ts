import { nodeWebSocket } from './node-web-socket';
import { installWebSocket } from './web-socket';

/*
 * The Node entry (`@matchplane/sdk/node`): everything of the main entry, with `ws` installed as
 * the default WebSocket, so clients made without a `webSocket` option work on Node 20.
 */
export * from './index';
export { nodeWebSocket };

installWebSocket(nodeWebSocket);
