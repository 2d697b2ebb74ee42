export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** "Full jitter" exponential backoff: a random delay in [0, min(cap, base * 2^(attempt-1))]. */
export function backoffDelayMs(attempt: number, { baseMs, capMs }: { baseMs: number; capMs: number }): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(Math.random() * ceiling);
}
