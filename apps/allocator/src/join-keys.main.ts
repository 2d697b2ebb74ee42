import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { loadConfigOrExit } from '@matchplane/config';
import { AllocatorConfig } from './allocator.config';
import { RosterStore } from '@matchplane/allocation';
import { dataSourceOptions } from '@matchplane/persistence';
import { joinKeyStatuses, type JoinKeyStatus } from './join-key-retirement';
import { JoinKeyMaterialError, loadJoinSigner } from './join-keys.loader';

const USAGE = `usage: npm run join-keys -- status
Prints one JSON line per join key id (held by JOIN_KEYS_FILE or named by a recorded token or
roster): what it still signs and whether it can be removed from the key set ("retirable").
Exit status: 0; 3 when a key was removed from the key set while live tokens or rosters name it.`;

/** Exit status when a removed key still signs live tokens: those players cannot join. */
const EXIT_REMOVED_WHILE_IN_USE = 3;

async function status(config: AllocatorConfig): Promise<JoinKeyStatus[]> {
  const signer = loadJoinSigner(config);
  const dataSource = new DataSource(
    dataSourceOptions(config, { applicationName: 'join-keys-cli' }),
  );
  await dataSource.initialize();
  try {
    const usage = await new RosterStore().joinKeyUsage(dataSource.manager, new Date());
    return joinKeyStatuses(usage, signer.heldKeyIds(), signer.activeKeyId);
  } finally {
    await dataSource.destroy();
  }
}

const args = process.argv.slice(2);
if (args[0] === '--help' || args[0] === '-h') {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
if (args.length !== 1 || args[0] !== 'status') {
  process.stderr.write(`join-keys: unknown command ${JSON.stringify(args.join(' '))}\n${USAGE}\n`);
  process.exit(2);
}
Logger.overrideLogger(['error']);
const config = loadConfigOrExit(AllocatorConfig, 'join-keys');
status(config).then(
  (statuses) => {
    for (const line of statuses) process.stdout.write(`${JSON.stringify(line)}\n`);
    if (statuses.some((line) => line.removedWhileInUse))
      process.exitCode = EXIT_REMOVED_WHILE_IN_USE;
  },
  (error: unknown) => {
    const message =
      error instanceof JoinKeyMaterialError || error instanceof Error
        ? error.message
        : String(error);
    process.stderr.write(`join-keys: ${message}\n`);
    process.exitCode = 1;
  },
);
