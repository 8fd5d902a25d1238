/**
 * Reads until the value is accepted (a change reaching another install, a state the engine
 * reports), or fails with what was awaited and the last value read.
 */
export async function eventually<T>(
  read: () => Promise<T> | T,
  accept: (value: T) => boolean,
  what: string,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
