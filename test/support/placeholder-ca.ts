import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** What a CA file's checks and readers look at: a PEM certificate block (not a usable CA). */
export const PLACEHOLDER_CA_PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

/**
 * A CA file for tests that only parse configuration or build options, removed after the file's
 * tests. Made when called (not in beforeAll), so an it.each table may name it.
 */
export function placeholderCaFile(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'mp-placeholder-ca-'));
  const file = path.join(dir, 'ca.pem');
  writeFileSync(file, PLACEHOLDER_CA_PEM);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return file;
}
