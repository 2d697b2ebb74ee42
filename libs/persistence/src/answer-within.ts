/**
 * `work`, or an error once it has taken `timeoutMs`: a call must not hold up a caller that has
 * somewhere else to go (a shared Redis connection queues commands while Redis is down). The work
 * itself is not cancelled: its answer, when it comes, is dropped.
 */
export async function answerWithin<T>(work: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
