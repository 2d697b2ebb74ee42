/**
 * DATABASE_URL and REDIS_URL: the conventional single-variable form of the separate connection
 * variables. Loading expands a URL into those variables, so everything downstream reads only
 * them. Precedence: a part the URL gives is used; a separate variable fills a part the URL leaves
 * out (a password from its own secret, say); a separate variable that disagrees with the URL is a
 * start-up error, never a silent choice. A URL carries a password, so it is never echoed.
 */
interface ConnectionUrl {
  /** The URL variable, e.g. DATABASE_URL. */
  readonly variable: string;
  /** How the URL must look, for the message when it does not. */
  readonly shape: string;
  readonly protocols: readonly string[];
  /** Separate variable -> its value in the URL (undefined: the URL leaves it out). */
  parts(url: URL): Record<string, string | undefined>;
  /** Why this URL cannot be used, beyond its syntax (undefined: usable). */
  unsupported(url: URL): string | undefined;
}

/** Variables whose values are secret: named in a disagreement, never shown. */
const SECRET_PARTS = new Set(['DATABASE_PASSWORD', 'REDIS_PASSWORD']);

function decoded(raw: string): string | undefined {
  return raw === '' ? undefined : decodeURIComponent(raw);
}

function host(url: URL): string | undefined {
  // An IPv6 literal keeps its brackets in URL.hostname; the drivers want the bare address.
  return decoded(url.hostname.replace(/^\[(.*)\]$/, '$1'));
}

const DATABASE_URL: ConnectionUrl = {
  variable: 'DATABASE_URL',
  shape: 'postgres://user:password@host:port/database',
  protocols: ['postgres:', 'postgresql:'],
  parts: (url) => ({
    DATABASE_HOST: host(url),
    DATABASE_PORT: decoded(url.port),
    DATABASE_USER: decoded(url.username),
    DATABASE_PASSWORD: decoded(url.password),
    DATABASE_NAME: decoded(url.pathname.replace(/^\//, '')),
  }),
  unsupported: (url) =>
    url.pathname.replace(/^\//, '').includes('/')
      ? 'names one database after the host (a path with "/" in it is not a database name)'
      : url.search !== '' || url.hash !== ''
        ? `has no options after "?" or "#" here (got ${[...url.searchParams.keys()].map((key) => `"${key}"`).join(', ') || 'a fragment'}); set the separate DATABASE_* variables instead`
        : undefined,
};

const REDIS_URL: ConnectionUrl = {
  variable: 'REDIS_URL',
  shape: 'redis://:password@host:port',
  protocols: ['redis:'],
  parts: (url) => ({
    REDIS_HOST: host(url),
    REDIS_PORT: decoded(url.port),
    REDIS_PASSWORD: decoded(url.password),
  }),
  unsupported: (url) =>
    url.username !== '' && url.username !== 'default'
      ? 'has no user here (Redis ACL users are not supported; leave it out or use "default")'
      : !['', '/', '/0'].includes(url.pathname)
        ? 'uses database 0 only (keys are separated by REDIS_KEY_PREFIX instead)'
        : url.search !== '' || url.hash !== ''
          ? 'has no options after "?" or "#" here'
          : undefined,
};

const CONNECTION_URLS = [DATABASE_URL, REDIS_URL];

/**
 * Expands the connection URLs among `plain` (the raw variables given, as loadConfig reads them)
 * into their separate variables, in place. Returns the problems, each naming its variable;
 * `origins` learns which URL each filled variable came from, for messages about its value.
 */
export function expandConnectionUrls(
  plain: Record<string, string>,
  origins: Map<string, string>,
): string[] {
  const problems: string[] = [];
  for (const spec of CONNECTION_URLS) {
    const raw = plain[spec.variable];
    if (raw === undefined) continue;
    const url = parseUrl(raw);
    const malformed = `${spec.variable} must be a URL like ${spec.shape} (a value was given; it is secret, so not shown)`;
    // Without "//" what parses as a scheme may be the start of credentials: call it malformed.
    if (url === undefined || !raw.startsWith(`${url.protocol}//`)) {
      problems.push(malformed);
      continue;
    }
    if (!spec.protocols.includes(url.protocol)) {
      problems.push(
        `${spec.variable} must start with ${spec.protocols.map((p) => `${p}//`).join(' or ')} (got "${url.protocol}//...")`,
      );
      continue;
    }
    const why = spec.unsupported(url);
    if (why !== undefined) {
      problems.push(`${spec.variable} ${why}`);
      continue;
    }
    let parts: Record<string, string | undefined>;
    try {
      parts = spec.parts(url);
    } catch {
      problems.push(malformed); // a bad %-escape
      continue;
    }
    for (const [variable, fromUrl] of Object.entries(parts)) {
      if (fromUrl === undefined) continue;
      const separate = plain[variable];
      if (separate === undefined) {
        plain[variable] = fromUrl;
        origins.set(variable, spec.variable);
      } else if (separate !== fromUrl) {
        problems.push(disagreement(variable, spec.variable, separate, fromUrl));
      }
    }
  }
  return problems;
}

function parseUrl(raw: string): URL | undefined {
  try {
    return new URL(raw);
  } catch {
    return undefined;
  }
}

function disagreement(
  variable: string,
  urlVariable: string,
  separate: string,
  fromUrl: string,
): string {
  const values = SECRET_PARTS.has(variable)
    ? 'both are secret, so not shown'
    : `got "${separate}", the URL says "${fromUrl}"`;
  return `${variable} disagrees with ${urlVariable}: set one or the other, or the same value in both (${values})`;
}
