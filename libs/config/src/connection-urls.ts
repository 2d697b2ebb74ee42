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
  /** Several hosts, comma-separated, may be listed (PostgreSQL's multi-host URL). */
  readonly hostList: boolean;
  /** Separate variable -> its value in the URL (undefined: the URL leaves it out). */
  parts(url: URL, hosts: readonly UrlHost[]): Record<string, string | undefined>;
  /** Why this URL cannot be used, beyond its syntax (undefined: usable). */
  unsupported(url: URL): string | undefined;
}

/** One host of a URL's authority, as the URL gives it. */
interface UrlHost {
  readonly host: string | undefined;
  readonly port: string | undefined;
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

/** A listed host as DATABASE_HOST writes it: host or host:port, an IPv6 address bracketed. */
function listed({ host, port }: UrlHost): string {
  const name = host?.includes(':') ? `[${host}]` : (host ?? '');
  return port === undefined ? name : `${name}:${port}`;
}

/** DATABASE_URL's query options, libpq's names, and the variable each one sets. */
const DATABASE_URL_OPTIONS: Readonly<Record<string, string>> = {
  target_session_attrs: 'DATABASE_TARGET_SESSION_ATTRS',
  sslmode: 'DATABASE_SSL_MODE',
  sslrootcert: 'DATABASE_SSL_CA_FILE',
  options: 'DATABASE_OPTIONS',
  application_name: 'DATABASE_APPLICATION_NAME',
};

const DATABASE_URL: ConnectionUrl = {
  variable: 'DATABASE_URL',
  shape: 'postgres://user:password@host:port[,host:port...]/database[?option=value&...]',
  protocols: ['postgres:', 'postgresql:'],
  hostList: true,
  parts: (url, hosts) => ({
    DATABASE_HOST: hosts.length === 1 ? hosts[0]?.host : hosts.map(listed).join(','),
    DATABASE_PORT: hosts.length === 1 ? hosts[0]?.port : undefined,
    DATABASE_USER: decoded(url.username),
    DATABASE_PASSWORD: decoded(url.password),
    DATABASE_NAME: decoded(url.pathname.replace(/^\//, '')),
    ...Object.fromEntries(
      [...url.searchParams].map(([option, value]): [string, string] => [
        DATABASE_URL_OPTIONS[option] ?? option,
        value,
      ]),
    ),
  }),
  unsupported: (url) => {
    if (url.pathname.replace(/^\//, '').includes('/'))
      return 'names one database after the host (a path with "/" in it is not a database name)';
    if (url.hash !== '') return 'has no "#" part';
    const options = [...url.searchParams.keys()];
    const unknown = options.filter((option) => !Object.hasOwn(DATABASE_URL_OPTIONS, option));
    if (unknown.length > 0)
      return `has options this app does not read (got ${unknown.map((key) => `"${key}"`).join(', ')}; it reads ${Object.keys(DATABASE_URL_OPTIONS).join(', ')}; other session settings go in options=-c name=value)`;
    const repeated = options.find((option, index) => options.indexOf(option) !== index);
    if (repeated !== undefined) return `gives the option "${repeated}" twice`;
    return undefined;
  },
};

const REDIS_URL: ConnectionUrl = {
  variable: 'REDIS_URL',
  shape: 'redis://user:password@host:port or rediss://... (TLS)',
  protocols: ['redis:', 'rediss:'],
  hostList: false,
  parts: (url) => ({
    REDIS_HOST: host(url),
    REDIS_PORT: decoded(url.port),
    REDIS_USERNAME: decoded(url.username),
    REDIS_PASSWORD: decoded(url.password),
    REDIS_TLS: url.protocol === 'rediss:' ? 'true' : 'false',
  }),
  unsupported: (url) =>
    !['', '/', '/0'].includes(url.pathname)
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
    const parsed = parseConnectionUrl(raw);
    const url = parsed?.url;
    const malformed = `${spec.variable} must be a URL like ${spec.shape} (a value was given; it is secret, so not shown)`;
    // Without "//" what parses as a scheme may be the start of credentials: call it malformed.
    if (parsed === undefined || url === undefined || !raw.startsWith(`${url.protocol}//`)) {
      problems.push(malformed);
      continue;
    }
    if (!spec.protocols.includes(url.protocol)) {
      problems.push(
        `${spec.variable} must start with ${spec.protocols.map((p) => `${p}//`).join(' or ')} (got "${url.protocol}//...")`,
      );
      continue;
    }
    if (parsed.hosts.length > 1 && !spec.hostList) {
      problems.push(
        `${spec.variable} names one host (for Redis Sentinel list the sentinels in REDIS_SENTINELS)`,
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
      parts = spec.parts(url, parsed.hosts);
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

/** The scheme, the credentials, the authority's host list and the rest of a URL. */
const AUTHORITY = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^/?#]*@)?([^/?#]*)(.*)$/s;

/**
 * WHATWG URL parsing takes one host; PostgreSQL's URL may list several (libpq's multi-host form,
 * "h1:5432,h2:5432"), so a list is parsed apart, each host as a URL of its own.
 */
function parseConnectionUrl(raw: string): { url: URL; hosts: UrlHost[] } | undefined {
  const match = AUTHORITY.exec(raw);
  const [, scheme = '', credentials = '', hostList = '', rest = ''] = match ?? [];
  try {
    if (!hostList.includes(',')) {
      const url = parseUrl(raw);
      return url && { url, hosts: [{ host: host(url), port: decoded(url.port) }] };
    }
    const url = parseUrl(`${scheme}${credentials}listed-hosts${rest}`);
    const hosts = hostList.split(',').map((entry) => {
      const one = parseUrl(`${scheme}${entry}`);
      if (one === undefined || one.pathname !== '' || host(one) === undefined) throw new Error();
      return { host: host(one), port: decoded(one.port) };
    });
    return url && { url, hosts };
  } catch {
    return undefined; // a bad %-escape, an empty host
  }
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
