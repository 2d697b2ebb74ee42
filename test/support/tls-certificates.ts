import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { run } from '../chaos/private-services';

export interface Certificates {
  /** The CA's certificate (PEM): what a client verifies the server against. */
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
}

/** A throwaway CA and a certificate it signs for localhost, in `dir`. */
export async function makeCertificates(dir: string): Promise<Certificates> {
  const file = (name: string) => path.join(dir, name);
  await run('openssl', [
    ...['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1'],
    ...['-keyout', file('ca.key'), '-out', file('ca.pem'), '-subj', '/CN=matchplane-test-ca'],
  ]);
  await run('openssl', [
    ...['req', '-newkey', 'rsa:2048', '-nodes'],
    ...['-keyout', file('server.key'), '-out', file('server.csr'), '-subj', '/CN=localhost'],
  ]);
  writeFileSync(file('san.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  await run('openssl', [
    ...['x509', '-req', '-in', file('server.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key')],
    ...['-CAcreateserial', '-days', '1', '-out', file('server.pem'), '-extfile', file('san.ext')],
  ]);
  return { ca: file('ca.pem'), cert: file('server.pem'), key: file('server.key') };
}
