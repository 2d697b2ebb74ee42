// The SDK's own specs import its modules directly, not through the Node entry that installs `ws`
// as the default WebSocket; Node 20 has no global one, so install it for them here.
import '@matchplane/sdk/node';
