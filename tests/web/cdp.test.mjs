// tests/web/cdp.test.mjs: Playwright (playwright-core) drives the desktop
// guest's Chromium through the gateway's CDP proxy (WS /v1/sessions/{id}/cdp):
// connectOverCDP by the /json/version URL and by the WebSocket URL, open a
// test page, click, read the DOM, evaluate, take a screenshot, and see the
// click in the gateway's own screenshot of the live screen; messages many
// times the agent's window (a full-page screenshot); without a token,
// with a view token, or for another session, the proxy refuses. Also the
// streaming exec WebSocket. Last, the gateway is killed with SIGKILL and
// restarted under the session: the page keeps its unsent input, its scroll
// position and its script's state, and Playwright connects again.
// Run by tests/run.sh:
//   VITRINE_BIN=build/vitrine "$(deploy/node.sh)" --test tests/web/*.test.mjs
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';
import { restartGateway, startGateway, stopGateway } from './gateway.mjs';

let g, base, key, sess;

const PAGE = `<!doctype html><html><body style="margin:0;background:#fff">
<button id="b" style="position:absolute;left:100px;top:100px;width:300px;height:200px;font-size:40px"
 onclick="this.textContent='clicked '+(++window.n);document.body.style.background='#0a0'">press</button>
<input id="i" style="position:absolute;left:100px;top:400px;width:300px;font-size:30px">
<div style="height:3000px"></div>
<script>window.n=0;</script></body></html>`;

// The session: restored from the desktop template the e2e tests share
// (tests/lib/e2e_template.h: VITRINE_E2E_TEMPLATE, which tests/run.sh names
// and the e2e binaries have made by now) with PAGE put in the guest and
// opened, else (run alone) booted with PAGE.
before(async () => {
  g = await startGateway('cdp');
  ({ base, key } = g);
  const H = { Authorization: 'Bearer ' + key };
  const shared = process.env.VITRINE_E2E_TEMPLATE;
  const tpl = shared && await fetch(`${base}/v1/templates/${shared}`, { headers: H });
  const restore = tpl && tpl.status === 200 && (await tpl.json()).status === 'ready';
  const r = await fetch(base + '/v1/sessions?wait=ready', {
    method: 'POST', headers: H,
    body: JSON.stringify(restore ? { template: shared } : { image: 'desktop', page: PAGE }),
  });
  sess = await r.json();
  assert.equal(r.status, 201, JSON.stringify(sess));
  if (!restore) return;
  const C = auth(sess.tokens.control);
  const put = await fetch(`${base}/v1/sessions/${sess.id}/files?path=cdp.html`, { method: 'PUT', headers: C, body: PAGE });
  assert.equal(put.status, 200, await put.text());
  const open = await fetch(`${base}/v1/sessions/${sess.id}/open`, { method: 'POST', headers: C,
    body: JSON.stringify({ url: 'file:///home/vitrine/cdp.html' }) });
  assert.equal(open.status, 200, await open.text());
});

after(async () => {
  assert.equal(await stopGateway(g), 0, 'the gateway exits cleanly');
});

const auth = (t) => ({ Authorization: 'Bearer ' + t });
const cdpUrl = () => `${base}/v1/sessions/${sess.id}/cdp`;

test('playwright drives the guest browser through the CDP proxy', { timeout: 240000 }, async () => {
  const browser = await chromium.connectOverCDP(cdpUrl(), { headers: auth(sess.tokens.control), timeout: 60000 });
  try {
    const ctx = browser.contexts()[0];
    assert.ok(ctx, 'the guest browser has its default context');
    const page = ctx.pages().find((p) => p.url().startsWith('file:')) || ctx.pages()[0];
    assert.ok(page, 'the guest tab is there');
    assert.equal(await page.textContent('#b'), 'press');
    await page.click('#b');
    assert.equal(await page.textContent('#b'), 'clicked 1');
    assert.equal(await page.evaluate(() => window.n), 1);
    // Playwright's own screenshot of the page, through the proxy: a PNG the
    // size of the viewport with the button's green around it.
    const png = await page.screenshot();
    assert.equal(png.subarray(1, 4).toString(), 'PNG');
    assert.ok(png.length > 1000);
    // The same click is on the live screen: the gateway's screenshot shows
    // the green background the click set.
    const shot = await fetch(`${base}/v1/sessions/${sess.id}/screenshot?format=png`, { headers: auth(sess.tokens.view) });
    assert.equal(shot.status, 200);
    const bytes = Buffer.from(await shot.arrayBuffer());
    const { green } = await pageColor(browser, bytes);
    assert.ok(green, 'the live screen shows the page the click turned green');
    // A new page opened through CDP shows up and navigates (loopback only:
    // the guest has no network).
    const p2 = await ctx.newPage();
    await p2.goto('about:blank');
    await p2.setContent('<h1 id=h>second tab</h1>');
    assert.equal(await p2.textContent('#h'), 'second tab');
    await p2.close();
  } finally {
    await browser.close();
  }
});

// Decodes the PNG in the (connected) guest browser itself: is the pixel at
// (20, 700), outside the button, green? (No PNG decoder in node's stdlib.)
async function pageColor(browser, png) {
  const ctx = browser.contexts()[0];
  const p = await ctx.newPage();
  try {
    const rgb = await p.evaluate(async (b64) => {
      const img = new Image();
      img.src = 'data:image/png;base64,' + b64;
      await img.decode();
      const c = document.createElement('canvas');
      c.width = img.width; c.height = img.height;
      const g = c.getContext('2d');
      g.drawImage(img, 0, 0);
      return Array.from(g.getImageData(20, 700, 1, 1).data.slice(0, 3));
    }, png.toString('base64'));
    return { green: rgb[1] > 120 && rgb[0] < 60 && rgb[2] < 60, rgb };
  } finally {
    await p.close();
  }
}

// DevTools messages many times the agent's 1 MiB window, both ways: the
// agent sends them in parts as the gateway returns credit
// (docs/agent.md). A full-page screenshot of a page of noise (a PNG of
// ~10 MiB, ~14 MiB of base64 in one message), a big string out of the
// page, a big argument into it.
test('large DevTools messages: a full-page screenshot, big values both ways', { timeout: 240000 }, async () => {
  const browser = await chromium.connectOverCDP(cdpUrl(), { headers: auth(sess.tokens.control), timeout: 60000 });
  const page = await browser.contexts()[0].newPage();
  try {
    await page.setContent(`<body style="margin:0"><canvas id=c width=1280 height=2800></canvas>
<script>const c = document.getElementById('c'), g = c.getContext('2d');
const d = g.createImageData(c.width, c.height), u = new Uint32Array(d.data.buffer);
let x = 2463534242;
for (let i = 0; i < u.length; i++) { x ^= x << 13; x ^= x >>> 17; x ^= x << 5; u[i] = x | 0xff000000; }
g.putImageData(d, 0, 0);</script></body>`);
    const t0 = Date.now();
    const png = await page.screenshot({ fullPage: true, timeout: 180000 });
    const ms = Date.now() - t0;
    assert.equal(png.subarray(1, 4).toString(), 'PNG');
    const w = png.readUInt32BE(16), h = png.readUInt32BE(20);
    console.log(`# full-page screenshot: ${w}x${h}, ${(png.length / 1048576).toFixed(1)} MiB PNG in ${ms} ms`);
    assert.ok(h >= 2800, `the whole page's height (${h})`);
    assert.ok(png.length > 4 * 1048576, `noise does not compress (${png.length} bytes)`);

    const out = await page.evaluate((n) => 'v'.repeat(n) + '.', 6 * 1048576);
    assert.equal(out.length, 6 * 1048576 + 1);
    assert.ok(out.endsWith('v.'));
    const arg = 'a'.repeat(3 * 1048576) + 'z';
    assert.equal(await page.evaluate((s) => s.length + s.slice(-2), arg), `${arg.length}az`);
  } finally {
    await page.close();
    await browser.close();
  }
});

test('the WebSocket URL works directly, and /json/version names it', async () => {
  const r = await fetch(cdpUrl() + '/json/version/', { headers: auth(sess.tokens.control) });
  assert.equal(r.status, 200);
  const v = await r.json();
  assert.match(v.webSocketDebuggerUrl, new RegExp(`^ws://127\\.0\\.0\\.1:\\d+/v1/sessions/${sess.id}/cdp$`));
  const browser = await chromium.connectOverCDP(v.webSocketDebuggerUrl, { headers: auth(sess.tokens.control), timeout: 60000 });
  try {
    const page = browser.contexts()[0].pages()[0];
    assert.equal(typeof (await page.evaluate(() => document.title)), 'string');
  } finally {
    await browser.close();
  }
});

test('the proxy refuses without the control token', async () => {
  for (const [headers, status] of [[{}, 401], [auth(sess.tokens.view), 403], [auth('x'.repeat(43)), 401]]) {
    await assert.rejects(chromium.connectOverCDP(cdpUrl(), { headers, timeout: 15000 }));
    const r = await fetch(cdpUrl() + '/json/version', { headers });
    assert.equal(r.status, status, JSON.stringify(headers));
  }
  // A WebSocket upgrade without a token (or with a view token) is refused
  // before any CDP flows.
  const { wsConnect } = await import('./ws_raw.mjs');
  await assert.rejects(wsConnect(cdpUrl()));
  await assert.rejects(wsConnect(cdpUrl(), auth(sess.tokens.view)));
});

test('streaming exec: output as it comes, stdin, exit', async () => {
  const { wsConnect } = await import('./ws_raw.mjs');
  const url = `${base}/v1/sessions/${sess.id}/exec/stream`;
  const c = await wsConnect(url, { Authorization: 'Bearer ' + sess.tokens.control });
  c.sendText(JSON.stringify({ cmd: 'echo start; read line; echo "got $line"; echo oops >&2; exit 7' }));
  const started = JSON.parse(await c.nextText());
  assert.equal(started.type, 'started');
  assert.ok(started.pid > 0);
  let out = Buffer.alloc(0), err = Buffer.alloc(0);
  const first = await c.next();
  assert.equal(first.binary, true);
  assert.equal(first.data[0], 1);
  out = Buffer.concat([out, first.data.subarray(1)]);
  assert.equal(out.toString(), 'start\n', 'the first line arrives before stdin is sent');
  c.sendBinary(Buffer.from('héllo\n'));
  let exit;
  for (;;) {
    const m = await c.next();
    if (!m.binary) { exit = JSON.parse(m.data.toString()); break; }
    if (m.data[0] === 1) out = Buffer.concat([out, m.data.subarray(1)]);
    else err = Buffer.concat([err, m.data.subarray(1)]);
  }
  assert.equal(out.toString(), 'start\ngot héllo\n');
  assert.equal(err.toString(), 'oops\n');
  assert.deepEqual(exit, { type: 'exit', exit_code: 7, signal: 0, timed_out: false });
  assert.equal((await c.closed()).code, 1000);

  // a signal ends a command that would run for long
  const c2 = await wsConnect(url, { Authorization: 'Bearer ' + sess.tokens.control });
  c2.sendText(JSON.stringify({ cmd: 'sleep 100' }));
  assert.equal(JSON.parse(await c2.nextText()).type, 'started');
  c2.sendText(JSON.stringify({ type: 'signal', signal: 15 }));
  assert.deepEqual(JSON.parse(await c2.nextText()), { type: 'exit', exit_code: null, signal: 15, timed_out: false });

  // a bad first message closes with 1008 and a reason
  const c3 = await wsConnect(url, { Authorization: 'Bearer ' + sess.tokens.control });
  c3.sendText('{"cmd": ""}');
  const closed = await c3.closed();
  assert.equal(closed.code, 1008);
  assert.match(closed.reason, /cmd/);
});

test('the gateway dies and comes back: the page state stays, Playwright reconnects', { timeout: 240000 }, async () => {
  let browser = await chromium.connectOverCDP(cdpUrl(), { headers: auth(sess.tokens.control), timeout: 60000 });
  const find = (b) => b.contexts()[0].pages().find((p) => p.url().startsWith('file:'));
  let page = find(browser);
  await page.fill('#i', 'unsent draft ✓');
  await page.evaluate(() => window.scrollTo(0, 500));
  const clicks = await page.evaluate(() => window.n);
  await browser.close(); // disconnects; the guest's Chromium runs on

  g = await restartGateway(g);
  ({ base, key } = g);
  const r = await fetch(`${base}/v1/sessions/${sess.id}?wait=ready`, { headers: auth(sess.tokens.control) });
  const back = await r.json();
  assert.equal(r.status, 200, JSON.stringify(back));
  assert.equal(back.status, 'ready', JSON.stringify(back));

  browser = await chromium.connectOverCDP(cdpUrl(), { headers: auth(sess.tokens.control), timeout: 60000 });
  try {
    page = find(browser);
    assert.ok(page, 'the same tab is there');
    assert.equal(await page.inputValue('#i'), 'unsent draft ✓');
    assert.equal(await page.evaluate(() => window.scrollY), 500);
    assert.equal(await page.evaluate(() => window.n), clicks);
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.click('#b');
    assert.equal(await page.evaluate(() => window.n), clicks + 1);
  } finally {
    await browser.close();
  }
});
