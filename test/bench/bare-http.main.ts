import http from 'node:http';

/**
 * The ceiling bench:probes compares an edge with: a bare Node HTTP server that reads a small JSON
 * body and answers a small JSON one, nothing else (no framework, no validation, no crypto).
 */
const port = Number(process.argv[2] ?? 0);
http
  .createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = JSON.stringify({ ok: true, bytes: Buffer.concat(chunks).length });
      response.writeHead(200, { 'content-type': 'application/json' }).end(body);
    });
  })
  .listen(port, '127.0.0.1', () => process.stdout.write('bare-http ready\n'));
