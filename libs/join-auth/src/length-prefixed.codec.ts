/**
 * The primitives every join-auth byte layout is built from: big-endian fixed-width integers and
 * strings as a uint16 byte length followed by their UTF-8 bytes. Length prefixes (rather than
 * separators) make each layout injective, so no two distinct values share an encoding.
 */

export const UINT16_MAX = 0xffff;
export const UINT32_MAX = 0xffff_ffff;

/** Thrown by ByteReader on input that is not a canonical encoding; callers map it to their code. */
export class LayoutError extends Error {
  override name = 'LayoutError';
}

// Node's TextDecoder (unlike Buffer#toString) can refuse invalid UTF-8 instead of replacing it;
// ignoreBOM keeps a leading U+FEFF as a character so decoding stays the inverse of encoding.
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** True when the string has no lone surrogates, i.e. UTF-8 encoding round-trips it exactly. */
export function isWellFormedString(value: string): boolean {
  return Buffer.from(value, 'utf8').toString('utf8') === value;
}

export function utf8Length(value: string): number {
  return Buffer.byteLength(value, 'utf8');
}

export class ByteWriter {
  private readonly chunks: Buffer[] = [];

  u8(value: number): this {
    this.assertInteger(value, 0xff);
    this.chunks.push(Buffer.of(value));
    return this;
  }

  u32(value: number): this {
    this.assertInteger(value, UINT32_MAX);
    const chunk = Buffer.alloc(4);
    chunk.writeUInt32BE(value);
    this.chunks.push(chunk);
    return this;
  }

  u64(value: number): this {
    this.assertInteger(value, Number.MAX_SAFE_INTEGER);
    const chunk = Buffer.alloc(8);
    chunk.writeBigUInt64BE(BigInt(value));
    this.chunks.push(chunk);
    return this;
  }

  str16(value: string): this {
    if (!isWellFormedString(value)) throw new LayoutError('string is not well-formed UTF-16');
    const bytes = Buffer.from(value, 'utf8');
    if (bytes.length > UINT16_MAX) throw new LayoutError('string longer than 65535 bytes');
    const prefix = Buffer.alloc(2);
    prefix.writeUInt16BE(bytes.length);
    this.chunks.push(prefix, bytes);
    return this;
  }

  fixed(bytes: Uint8Array): this {
    this.chunks.push(Buffer.from(bytes));
    return this;
  }

  toBuffer(): Buffer {
    return Buffer.concat(this.chunks);
  }

  private assertInteger(value: number, max: number): void {
    if (!Number.isSafeInteger(value) || value < 0 || value > max) {
      throw new LayoutError(`${value} is not an integer from 0 to ${max}`);
    }
  }
}

export class ByteReader {
  private offset = 0;

  constructor(private readonly bytes: Uint8Array) {}

  u8(field: string): number {
    return this.take(field, 1).readUInt8(0);
  }

  u32(field: string): number {
    return this.take(field, 4).readUInt32BE(0);
  }

  u64(field: string): number {
    const value = this.take(field, 8).readBigUInt64BE(0);
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) {
      throw new LayoutError(`${field} exceeds 2^53 - 1`);
    }
    return Number(value);
  }

  str16(field: string): string {
    const length = this.take(`${field} length`, 2).readUInt16BE(0);
    const bytes = this.take(field, length);
    try {
      return strictUtf8.decode(bytes);
    } catch {
      throw new LayoutError(`${field} is not valid UTF-8`);
    }
  }

  fixed(field: string, length: number): Buffer {
    return Buffer.from(this.take(field, length));
  }

  /** Strict layouts end exactly where their last field does. */
  end(): void {
    const left = this.bytes.length - this.offset;
    if (left !== 0) throw new LayoutError(`${left} trailing byte(s)`);
  }

  private take(field: string, length: number): Buffer {
    if (this.offset + length > this.bytes.length) throw new LayoutError(`${field} is truncated`);
    const slice = Buffer.from(this.bytes.buffer, this.bytes.byteOffset + this.offset, length);
    this.offset += length;
    return slice;
  }
}

const BASE64URL_TEXT = /^[A-Za-z0-9_-]*$/;
const BASE64_TEXT = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Unpadded base64url, canonical only: Buffer.from() would silently skip stray characters and
 * ignore non-zero trailing bits, which would give one token several spellings.
 */
export function decodeBase64Url(text: string): Buffer | undefined {
  if (!BASE64URL_TEXT.test(text) || text.length % 4 === 1) return undefined;
  const bytes = Buffer.from(text, 'base64url');
  return bytes.toString('base64url') === text ? bytes : undefined;
}

/** Standard padded base64 (what `openssl rand -base64 32` prints), canonical only. */
export function decodeBase64(text: string): Buffer | undefined {
  if (!BASE64_TEXT.test(text) || text.length % 4 !== 0) return undefined;
  const bytes = Buffer.from(text, 'base64');
  return bytes.toString('base64') === text ? bytes : undefined;
}
