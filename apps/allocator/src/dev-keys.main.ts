import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/*
 * Development only: writes a join key set (a JSON map {keyId: base64Key}, mode 0600) if the file
 * does not exist yet, so `npm run stack` and compose can start the allocator. Production key sets
 * come from a Secret (docker/k8s/join-keys.secret.yaml). Never prints key material.
 */
const USAGE = 'usage: node dist/apps/allocator/src/dev-keys.main.js <file> [keyId]';

const [file, keyId = 'dev-1', ...rest] = process.argv.slice(2);
if (!file || rest.length > 0 || !/^[\x21-\x7e]{1,64}$/.test(keyId)) {
  process.stderr.write(`${USAGE}\n`);
  process.exit(2);
}
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
