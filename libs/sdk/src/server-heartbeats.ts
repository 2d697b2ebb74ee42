import { ErrorCode } from '@matchplane/contracts';
import { MatchplaneApiError } from './sdk.errors';

/** The control plane's default SERVER_HEARTBEAT_TIMEOUT_MS; a server beats every third of it. */
export const DEFAULT_SERVER_HEARTBEAT_INTERVAL_MS = 3_333;

export interface ServerHeartbeatOptions {
  /** Default {@link DEFAULT_SERVER_HEARTBEAT_INTERVAL_MS}: a third of the default timeout, so two beats may be lost. */
  intervalMs?: number;
  /** Called with a failed heartbeat that does not end the loop. Its own throws are ignored. */
  onError?: (error: unknown) => void;
}

/** Why a server's heartbeat loop ended. */
export type ServerHeartbeatStopReason =
  | { readonly reason: 'stopped' }
  /** 401 ALLOCATION_ENDED: the match is over and the allocation released; nothing left to keep alive. */
  | { readonly reason: 'ended'; readonly error: MatchplaneApiError };

export interface ServerHeartbeatHandle {
  /** Ends the loop; a beat in flight completes but none follows. Idempotent. */
  stop(): void;
  /** Settles (never rejects) when the loop ends, with why. */
  readonly done: Promise<ServerHeartbeatStopReason>;
}

/**
 * Calls `beat` now and then every `intervalMs` after the previous one settled (beats never
 * overlap), until stopped or until the control plane says the allocation ended. The timers are
 * unref'd: the loop alone does not keep a process alive.
 */
export function runServerHeartbeats(
  beat: () => Promise<unknown>,
  options: ServerHeartbeatOptions = {},
): ServerHeartbeatHandle {
  const intervalMs = options.intervalMs ?? DEFAULT_SERVER_HEARTBEAT_INTERVAL_MS;
  if (!Number.isFinite(intervalMs) || intervalMs <= 0) {
    throw new RangeError(`heartbeat intervalMs must be a positive number, got ${intervalMs}`);
  }
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let settle: (reason: ServerHeartbeatStopReason) => void = () => undefined;
  const done = new Promise<ServerHeartbeatStopReason>((resolve) => (settle = resolve));

  const finish = (reason: ServerHeartbeatStopReason): void => {
    if (stopped) return;
    stopped = true;
    if (timer !== undefined) clearTimeout(timer);
    settle(reason);
  };
  const once = async (): Promise<void> => {
    try {
      await beat();
    } catch (error) {
      if (error instanceof MatchplaneApiError && error.code === ErrorCode.ALLOCATION_ENDED) {
        return finish({ reason: 'ended', error });
      }
      if (!stopped) {
        try {
          options.onError?.(error);
        } catch {
          // A throwing callback must not end (or crash) the loop.
        }
      }
    }
    if (stopped) return;
    timer = setTimeout(() => void once(), intervalMs);
    (timer as { unref?: () => void }).unref?.();
  };

  void once();
  return { stop: () => finish({ reason: 'stopped' }), done };
}
