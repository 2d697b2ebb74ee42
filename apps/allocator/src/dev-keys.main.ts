import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { exitCodeOf, exitOnUsageError } from '@matchplane/errors';

/*
 * Development only: writes a join key set (a JSON map {keyId: base64Key}, mode 0600) if the file
 * does not exist yet, so `npm run stack` and compose can start the allocator. Production key sets
 * come from a Secret (docker/k8s/join-keys.secret.yaml). Never prints key material.
 */
const USAGE = 'usage: node dist/apps/allocator/src/dev-keys.main.js <file> [keyId]';

const [file, keyId = 'dev-1', ...rest] = process.argv.slice(2);
if (!file || rest.length > 0 || !/^[\x21-\x7e]{1,64}$/.test(keyId)) {
  exitOnUsageError('dev-keys', 'expected a file and at most one printable key id', USAGE);
}
try {
  if (existsSync(file)) {
    process.stdout.write(`dev-keys: ${file} exists, kept\n`);
  } else {
    mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    writeFileSync(file, `${JSON.stringify({ [keyId]: randomBytes(32).toString('base64') })}\n`, {
      mode: 0o600,
      flag: 'wx',
    });
    process.stdout.write(`dev-keys: wrote a development key set (key id ${keyId}) to ${file}\n`);
  }
} catch (error) {
  // e.g. a directory that cannot be created: one line, not a stack trace.
  process.stderr.write(`dev-keys: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = exitCodeOf(error);
}
