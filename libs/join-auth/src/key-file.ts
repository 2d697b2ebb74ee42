import { JoinAuthError } from './join-auth.error';
import { KeySet, RAW_KEY_ID } from './key-set';

/**
 * An app's key set file as its variables name it, for the one-line start-up errors every app that
 * signs or verifies with a key file gives (the allocator's join keys, the API's and the edges'
 * probe keys). Key material is never part of a message.
 */
export interface ConfiguredKeyFile {
  /** The file's variable, e.g. JOIN_KEYS_FILE. */
  readonly variable: string;
  readonly path: string;
  /** What the keys are for, as the message says it ("join", "probe"). */
  readonly purpose: string;
  /** The error each app reports key material problems with. */
  fail(message: string): Error;
}

/** The file's key set, or `fail`: "<VARIABLE> "<path>" holds no usable <purpose> keys: <why>". */
export function loadKeyFile(file: ConfiguredKeyFile): KeySet {
  try {
    return KeySet.loadFile(file.path);
  } catch (error) {
    const reason = error instanceof JoinAuthError ? error.message : String(error);
    throw file.fail(
      `${file.variable} ${JSON.stringify(file.path)} holds no usable ${file.purpose} keys: ${reason}`,
    );
  }
}

/** A key set and the id of the key in it to sign with. */
export interface SigningKeys {
  readonly keys: KeySet;
  readonly activeKeyId: string;
}

/**
 * The file's key set and the key to sign with: `activeKeyId` (its variable `activeKeyVariable`),
 * else a raw key file's only key. A file `loadKeyFile` refuses, a key map with no active key id
 * configured, or an active key id the file lacks is `fail`, naming the keys it holds.
 */
export function loadSigningKeys(
  file: ConfiguredKeyFile,
  activeKeyId: string | undefined,
  activeKeyVariable: string,
): SigningKeys {
  const keys = loadKeyFile(file);
  const ids = keys.ids();
  const active =
    activeKeyId ?? (ids.length === 1 && ids[0] === RAW_KEY_ID ? RAW_KEY_ID : undefined);
  if (active !== undefined && keys.has(active)) return { keys, activeKeyId: active };
  const problem =
    active === undefined ? 'is not set' : `${JSON.stringify(active)} is not in the key file`;
  throw file.fail(
    `${activeKeyVariable} ${problem}; it must name one of the keys of ${JSON.stringify(file.path)} (${ids.map((id) => JSON.stringify(id)).join(', ')})`,
  );
}
