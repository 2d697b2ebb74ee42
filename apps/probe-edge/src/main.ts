import { loadConfigOrExit } from '@matchplane/config';
import { exitOnBootFailure } from '@matchplane/observability';
import { bootProbeEdge } from './probe-edge.boot';
import { ProbeEdgeConfig } from './probe-edge.config';

const config = loadConfigOrExit(ProbeEdgeConfig, 'probe-edge');
// Inside the chain, so missing key material is the one-line failure of exitOnBootFailure.
Promise.resolve()
  .then(() => bootProbeEdge(config))
  .catch(exitOnBootFailure('probe-edge'));
