import { installEdgePost } from './edge-probe';
import { nodeEdgePost } from './node-edge-post';
import { nodeWebSocket } from './node-web-socket';
import { installWebSocket } from './web-socket';

/*
 * The Node entry (`@matchplane/sdk/node`): everything of the main entry, with `ws` installed as
 * the default WebSocket, so clients made without a `webSocket` option work on Node 20, and
 * node:http as the probe edges' transport (a shorter turnaround inside every sample than fetch).
 */
export * from './index';
export { nodeEdgePost, nodeWebSocket };

installWebSocket(nodeWebSocket);
installEdgePost(nodeEdgePost);
