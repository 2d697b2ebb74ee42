/**
 * The apps the demo runs; the game servers run under the allocator (local provider), the probe
 * edges (one per region) under `edges`.
 */
export const STACK_APPS = [
  'api',
  'dispatcher',
  'matcher',
  'allocator',
  'maintenance',
  'edges',
] as const;
export type StackApp = (typeof STACK_APPS)[number];

/**
 * The demo cannot go on. `suspect` names the app whose output most likely explains it (the
 * allocator's includes its game servers'); the demo prints that app's last lines.
 */
export class DemoFailure extends Error {
  override name = 'DemoFailure';

  constructor(
    message: string,
    readonly suspect?: StackApp,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Rejects with a DemoFailure naming `what` unless `promise` settles within `timeoutMs`. */
export async function within<T>(
  promise: Promise<T>,
  timeoutMs: number,
  what: string,
  suspect?: StackApp,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new DemoFailure(`timed out after ${timeoutMs} ms waiting for ${what}`, suspect)),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause =
    error.cause instanceof Error && !error.message.includes(error.cause.message)
      ? ` (cause: ${error.cause.message})`
      : '';
  return `${error.message}${cause}`;
}
