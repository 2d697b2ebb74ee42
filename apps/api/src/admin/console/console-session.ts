import { Inject, Injectable } from '@nestjs/common';
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { ApiConfig } from '../../api.config';
import { parseOperatorTokens } from '../operator.guard';

export const CONSOLE_COOKIE = 'matchplane_console';
/** The cookie is only ever sent to the console's own paths. */
export const CONSOLE_PATH = '/admin';

/** A verified console session: who, until when, and the token its forms must echo. */
export interface ConsoleSession {
  operator: string;
  expiresAt: Date;
  csrfToken: string;
}

interface SessionClaims {
  /** operator name */
  o: string;
  /** expiry, epoch seconds */
  e: number;
  /** random nonce the CSRF token is derived from */
  n: string;
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

function equalBytes(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The operator console's sessions, kept by the browser only: a cookie `v1.<claims>.<mac>` whose
 * claims (operator, expiry, nonce) are HMAC-SHA256 signed with OPERATOR_CONSOLE_SECRET (or a key
 * derived from OPERATOR_TOKENS). A session ends when it expires or when its operator is no longer
 * configured. The CSRF token is a second MAC over the nonce: forms echo it, a cross-site page can
 * neither read it nor forge it.
 */
@Injectable()
export class ConsoleSessions {
  private readonly operators: Map<string, Buffer>;
  private readonly key: Buffer;
  private readonly lifetimeSeconds: number;

  constructor(@Inject(ApiConfig) config: ApiConfig) {
    this.operators = parseOperatorTokens(config.OPERATOR_TOKENS);
    this.key = sha256(
      config.OPERATOR_CONSOLE_SECRET ?? `matchplane-console:${config.OPERATOR_TOKENS ?? ''}`,
    );
    this.lifetimeSeconds = config.OPERATOR_CONSOLE_SESSION_SECONDS;
  }

  get configured(): boolean {
    return this.operators.size > 0;
  }

  get lifetime(): number {
    return this.lifetimeSeconds;
  }

  /** The operator a token belongs to, compared in constant time; undefined for any other token. */
  operatorOf(token: string): string | undefined {
    const presented = sha256(token);
    let found: string | undefined;
    for (const [name, expected] of this.operators) {
      if (timingSafeEqual(presented, expected)) found = name;
    }
    return found;
  }

  /** A fresh session cookie value for `operator`. */
  issue(operator: string, now = new Date()): string {
    const claims: SessionClaims = {
      o: operator,
      e: Math.floor(now.getTime() / 1000) + this.lifetimeSeconds,
      n: randomBytes(16).toString('base64url'),
    };
    const body = Buffer.from(JSON.stringify(claims)).toString('base64url');
    return `v1.${body}.${this.mac(`session.${body}`)}`;
  }

  /** The session a cookie value carries, when its MAC, expiry and operator all hold. */
  verify(cookie: string | undefined, now = new Date()): ConsoleSession | undefined {
    const [version, body, mac] = (cookie ?? '').split('.');
    if (version !== 'v1' || !body || !mac) return undefined;
    if (!equalBytes(Buffer.from(mac), Buffer.from(this.mac(`session.${body}`)))) return undefined;
    let claims: Partial<SessionClaims>;
    try {
      claims = JSON.parse(
        Buffer.from(body, 'base64url').toString('utf8'),
      ) as Partial<SessionClaims>;
    } catch {
      return undefined;
    }
    const { o: operator, e: expiry, n: nonce } = claims;
    if (typeof operator !== 'string' || typeof expiry !== 'number' || typeof nonce !== 'string') {
      return undefined;
    }
    if (expiry * 1000 <= now.getTime() || !this.operators.has(operator)) return undefined;
    return { operator, expiresAt: new Date(expiry * 1000), csrfToken: this.mac(`csrf.${nonce}`) };
  }

  /** Whether a form's CSRF token is the session's own. */
  csrfMatches(session: ConsoleSession, presented: unknown): boolean {
    return (
      typeof presented === 'string' &&
      equalBytes(Buffer.from(presented), Buffer.from(session.csrfToken))
    );
  }

  private mac(text: string): string {
    return createHmac('sha256', this.key).update(text).digest('base64url');
  }
}

/** The value of one cookie in a Cookie header. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const separator = part.indexOf('=');
    if (separator > 0 && part.slice(0, separator).trim() === name) {
      return part.slice(separator + 1).trim();
    }
  }
  return undefined;
}

/** Set-Cookie for a session (or, with no value, for ending one). */
export function sessionCookie(
  value: string | undefined,
  maxAgeSeconds: number,
  secure: boolean,
): string {
  return [
    `${CONSOLE_COOKIE}=${value ?? ''}`,
    `Path=${CONSOLE_PATH}`,
    `Max-Age=${value === undefined ? 0 : maxAgeSeconds}`,
    'HttpOnly',
    'SameSite=Strict',
    ...(secure ? ['Secure'] : []),
  ].join('; ');
}
