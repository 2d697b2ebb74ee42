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

/**
 * The key id to sign with: `configured` (its variable `variable`), else a raw key file's only key;
 * a key map with none configured, or (`mustHold`) with one it lacks, is `fail` naming the keys.
 */
export function activeKeyIdOf(
  file: ConfiguredKeyFile,
  keys: KeySet,
  variable: string,
  configured: string | undefined,
  mustHold = false,
): string {
  const ids = keys.ids();
  const active = configured ?? (ids.length === 1 && ids[0] === RAW_KEY_ID ? RAW_KEY_ID : undefined);
  if (active !== undefined && (!mustHold || keys.has(active))) return active;
  const problem =
    active === undefined ? 'is not set' : `${JSON.stringify(active)} is not in the key file`;
  throw file.fail(
    `${variable} ${problem}; it must name one of the keys of ${JSON.stringify(file.path)} (${ids.map((id) => JSON.stringify(id)).join(', ')})`,
  );
}
