import { exitOnBootFailure } from '@matchplane/observability';
import { bootRole, ROLES, type StudioRole } from './studio-deployment';

/* `node dist/apps/studio-example/src/main.js <role>`: one process of the studio's deployment. */

const role = process.argv[2];
if (!ROLES.includes(role as StudioRole)) {
  process.stderr.write(`usage: main.js <${ROLES.join('|')}> (see apps/studio-example/README.md)\n`);
  process.exit(2);
}
bootRole(role as StudioRole).catch(exitOnBootFailure(`studio ${role}`));
