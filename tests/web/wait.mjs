// tests/web/wait.mjs: polling until a condition holds, which the web tests
// each had a copy of.

// Calls fn every 100 ms until it answers something truthy, and answers
// that; throws naming what after timeoutMs.
export async function waitFor(what, fn, timeoutMs = 60000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error('timed out waiting for ' + what);
    await new Promise((r) => setTimeout(r, 100));
  }
}
