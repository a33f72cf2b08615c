// tests/web/viewer_input.test.mjs: a person's input in the web viewer
// besides mouse and keyboard (web/input.js), in Debian's headless Chromium
// through playwright-core, against `vitrine serve` with a tiny guest, whose
// console (serial.log in the gateway's run dir) says every key press, the
// line typed so far and every click with its pixel: pasting the local
// clipboard (button and Ctrl+V) types it exactly, Copy and Ctrl+C bring the
// guest's clipboard out (the tiny guest has no X: a stand-in xclip keeps it
// in a file), a touch tap clicks at its pixel and a long press right-clicks,
// one finger drags, two fingers scroll, the key row sends Esc and
// Ctrl+Alt+Del and latches Ctrl, and a dropped connection (cut by a TCP
// relay between the browser and the gateway) shows "reconnecting" and comes
// back live with control taken again, also in the middle of a paste. Run by tests/run.sh:
//   VITRINE_BIN=build/vitrine "$(deploy/node.sh)" --test tests/web/*.test.mjs
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { startGateway, stopGateway } from './gateway.mjs';
import { waitFor } from './wait.mjs';

const chromiumPath = process.env.CHROMIUM || '/usr/bin/chromium';
const W = 1280, H = 800;
let g, relay, base, sess, browser, context, page, cdp;
const sent = []; // the viewer's text messages on its stream sockets, parsed
const received = [];

// A TCP relay in front of the gateway: the browser talks to it, and
// cut() kills every connection through it, as a network that drops would.
function startRelay() {
  const pairs = new Set();
  const server = createServer((c) => {
    const up = connect(relay.target, '127.0.0.1');
    const pair = [c, up];
    pairs.add(pair);
    c.pipe(up);
    up.pipe(c);
    const end = () => { pairs.delete(pair); c.destroy(); up.destroy(); };
    c.on('error', end); up.on('error', end); c.on('close', end); up.on('close', end);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    server, port: server.address().port, target: 0,
    cut() { for (const [c, up] of pairs) { c.resetAndDestroy(); up.resetAndDestroy(); } pairs.clear(); },
  })));
}

// The tiny guest's console so far (its serial.log in the gateway's run base).
function consoleText() {
  const found = [];
  const walk = (d) => {
    for (const n of readdirSync(d)) {
      const p = join(d, n);
      let st;
      try { st = statSync(p); } catch { continue; }
      if (st.isDirectory()) walk(p);
      else if (n === 'serial.log') found.push(p);
    }
  };
  walk(g.runBase);
  assert.equal(found.length, 1, 'one guest, one console: ' + found.join(' '));
  return readFileSync(found[0], 'latin1');
}
// Console lines that appear after mark (a length of consoleText()).
const linesSince = (mark) => consoleText().slice(mark).split('\n').map((l) => l.trim());
async function waitLine(mark, line) {
  try {
    await waitFor('console line ' + JSON.stringify(line), () => linesSince(mark).includes(line));
  } catch (err) {
    console.log('console since:', JSON.stringify(linesSince(mark).slice(-20)), 'sent:', JSON.stringify(sent.filter((m) => m.type !== 'ping').slice(-8)),
      'received:', JSON.stringify(received.filter((m) => m.type !== 'pong').slice(-5)));
    throw err;
  }
}

before(async () => {
  relay = await startRelay();
  base = 'http://127.0.0.1:' + relay.port;
  g = await startGateway('web-input', ['--origins', base]);
  relay.target = Number(new URL(g.base).port);
  const r = await fetch(g.base + '/v1/sessions?wait=ready', {
    method: 'POST', headers: { Authorization: 'Bearer ' + g.key },
    body: JSON.stringify({ image: 'tiny', width: W, height: H }),
  });
  sess = await r.json();
  assert.equal(r.status, 201, JSON.stringify(sess));
  browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: ['--no-sandbox'] });
  context = await browser.newContext({ viewport: { width: 1100, height: 760 }, hasTouch: true });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  page = await context.newPage();
  page.on('pageerror', (e) => console.log('page error:', e.message));
  page.on('websocket', (ws) => {
    ws.on('framesent', (f) => { if (typeof f.payload === 'string') sent.push(JSON.parse(f.payload)); });
    ws.on('framereceived', (f) => { if (typeof f.payload === 'string') received.push(JSON.parse(f.payload)); });
  });
  await page.goto(base + '/web/#s=' + sess.id + '&t=' + sess.tokens.control);
  await page.waitForFunction(() => window.vitrineLive && window.vitrineLive.stream.frames > 0, null, { timeout: 60000 });
  await page.click('#take');
  await page.waitForFunction(() => window.vitrineLive.state.you === true, null, { timeout: 30000 });
  await waitFor('the key row', async () => page.locator('#keyrow').isVisible());
  cdp = await context.newCDPSession(page);
  // A guest just booted takes its first input slowly under TCG (its code
  // paths are cold): a burst of keys then overflows its input queue and
  // QEMU drops keys. One key first, seen by the guest, warms it up.
  const mark = consoleText().length;
  await page.locator('#screen').focus();
  await page.keyboard.press('Escape');
  await waitLine(mark, 'VITRINE key code=1');
});

after(async () => {
  if (browser) await browser.close();
  await stopGateway(g);
  if (relay) relay.server.close();
});

// The client pixel where guest pixel (x, y) is shown, rounded (touches
// arrive at whole pixels), and the guest pixel the viewer makes of it.
async function spot(x, y) {
  const box = await page.locator('#screen').boundingBox();
  const cx = Math.round(box.x + (x + 0.5) * box.width / W), cy = Math.round(box.y + (y + 0.5) * box.height / H);
  return { cx, cy, gx: Math.floor((cx - box.x) * W / box.width), gy: Math.floor((cy - box.y) * H / box.height) };
}

const touch = (type, points) => cdp.send('Input.dispatchTouchEvent', {
  type, touchPoints: points.map(([x, y], id) => ({ x, y, id })),
});

test('Paste types the local clipboard into the guest exactly; Ctrl+V in the view does too', async () => {
  let mark = consoleText().length;
  const text = 'Hi, Vitrine 42!\n(a+b)*c = "ok"; ~`|';
  await page.evaluate((t) => navigator.clipboard.writeText(t.replace('\n', '\r\n')), text);
  await page.click('#paste');
  await waitLine(mark, 'VITRINE line=Hi, Vitrine 42!');
  await waitLine(mark, 'VITRINE text=(a+b)*c = "ok"; ~`|');
  await page.waitForFunction((n) => window.vitrineLive.state.notice === 'pasted ' + n + ' bytes', text.length);
  const types = sent.filter((m) => m.type === 'type');
  assert.deepEqual(types.map((m) => m.text), [text]);
  // The view kept the keyboard focus (web/keyboard.js's field over it).
  assert.ok(await page.evaluate(() => document.activeElement.id === 'screen' || document.activeElement.className === 'vitrine-keys'), 'the view has the keyboard focus');

  mark = consoleText().length;
  await page.keyboard.press('Enter');
  await page.evaluate(() => navigator.clipboard.writeText('via ctrl v'));
  await page.locator('#screen').focus();
  await page.keyboard.press('Control+V');
  await waitLine(mark, 'VITRINE text=via ctrl v');
  // The V itself never went to the guest (47 is KEY_V): only the text did.
  assert.ok(!sent.some((m) => m.type === 'key' && m.code === 'KeyV' && m.down), 'no KeyV down sent');

  // Long text goes in pieces that each fit a message, and join up again.
  const pieces = await page.evaluate(() => vitrineTextChunks('é✓a\r\n'.repeat(1500)));
  assert.ok(pieces.length > 1);
  assert.equal(pieces.join(''), 'é✓a\n'.repeat(1500));
  for (const p of pieces) assert.ok(Buffer.byteLength(JSON.stringify({ type: 'type', text: p })) <= 4096);
  await page.locator('#screen').focus();
  await page.keyboard.press('Enter');
});

test("Copy and Ctrl+C put the guest's clipboard on the local one", async () => {
  const key = { Authorization: 'Bearer ' + g.key };
  // A stand-in xclip: -o prints what the last call without -o kept.
  const r = await fetch(g.base + '/v1/sessions/' + sess.id + '/exec', {
    method: 'POST', headers: key, body: JSON.stringify({
      user: 'root', cmd: 'printf \'%s\\n\' \'#!/bin/sh\' \'case " $* " in *" -o "*) cat /tmp/clip 2>/dev/null ;; *) cat >/tmp/clip ;; esac\' >/bin/xclip && chmod 755 /bin/xclip',
    }),
  });
  assert.equal(r.status, 200);
  assert.equal((await r.json()).exit_code, 0);
  const put = async (text) => {
    const p = await fetch(g.base + '/v1/sessions/' + sess.id + '/clipboard', { method: 'PUT', headers: key, body: JSON.stringify({ text }) });
    assert.equal(p.status, 200, await p.text());
  };
  await put('from the guest ✓ "quoted"');
  await page.click('#copy');
  await waitFor('the local clipboard', async () =>
    (await page.evaluate(() => navigator.clipboard.readText())) === 'from the guest ✓ "quoted"');

  await put('second copy');
  await page.locator('#screen').focus();
  await page.keyboard.press('Control+C');
  await waitFor('the local clipboard after Ctrl+C', async () =>
    (await page.evaluate(() => navigator.clipboard.readText())) === 'second copy');
  // The keys went to the guest too (so its app copies first).
  assert.ok(sent.some((m) => m.type === 'key' && m.code === 'KeyC' && m.down));
});

// A stream socket of node's own (the gateway's origin needs no Origin),
// authenticated with token: {send(obj), next(pred), close()}.
async function rawStream(token) {
  const ws = new WebSocket(g.base.replace('http', 'ws') + '/v1/sessions/' + sess.id + '/stream');
  const got = [];
  ws.onmessage = (e) => { if (typeof e.data === 'string') got.push(JSON.parse(e.data)); };
  await new Promise((r, j) => { ws.onopen = r; ws.onerror = j; });
  ws.send(JSON.stringify({ type: 'auth', token, name: 'raw' }));
  const next = (pred) => waitFor('a message', () => {
    const i = got.findIndex(pred);
    return i < 0 ? null : got.splice(0, i + 1).at(-1);
  }, 15000);
  await next((m) => m.type === 'hello');
  return { send: (o) => ws.send(JSON.stringify(o)), next, close: () => ws.close() };
}

test('type and clipboard messages: a view token may neither, a control token without the lease only read', async () => {
  const view = await rawStream(sess.tokens.view);
  view.send({ type: 'type', text: 'x' });
  assert.equal((await view.next((m) => m.type === 'error')).code, 'forbidden');
  view.send({ type: 'clipboard' });
  assert.equal((await view.next((m) => m.type === 'error')).code, 'forbidden');
  view.close();
  const other = await rawStream(sess.tokens.control); // the page holds control
  const mark = consoleText().length;
  other.send({ type: 'type', text: 'not typed' });
  assert.equal((await other.next((m) => m.type === 'error')).code, 'not_controller');
  other.send({ type: 'clipboard' });
  assert.deepEqual(await other.next((m) => m.type === 'clipboard'), { type: 'clipboard', text: 'second copy' });
  other.close();
  assert.ok(!linesSince(mark).some((l) => l.startsWith('VITRINE text=not')));
});

test('a touch tap clicks at its pixel, a long press right-clicks, one finger drags', async () => {
  let mark = consoleText().length;
  const a = await spot(600, 300);
  assert.ok(Math.abs(a.gx - 600) <= 1 && Math.abs(a.gy - 300) <= 1, JSON.stringify(a));
  await page.touchscreen.tap(a.cx, a.cy);
  await waitLine(mark, `VITRINE click x=${a.gx} y=${a.gy} button=left`);

  mark = consoleText().length;
  const b = await spot(900, 200);
  await touch('touchStart', [[b.cx, b.cy]]);
  await new Promise((r) => setTimeout(r, 900));
  await touch('touchEnd', []);
  await waitLine(mark, `VITRINE click x=${b.gx} y=${b.gy} button=right`);

  mark = consoleText().length;
  const from = await spot(200, 600), to = await spot(400, 500);
  const n0 = sent.length;
  await touch('touchStart', [[from.cx, from.cy]]);
  for (let i = 1; i <= 5; i++)
    await touch('touchMove', [[from.cx + (to.cx - from.cx) * i / 5, from.cy + (to.cy - from.cy) * i / 5]]);
  await touch('touchEnd', []);
  await waitLine(mark, `VITRINE click x=${from.gx} y=${from.gy} button=left`);
  const drag = await waitFor('the drag to end', () => {
    const d = sent.slice(n0).filter((m) => m.type === 'pointer');
    return d.length && d.at(-1).buttons === 0 ? d : null;
  });
  assert.deepEqual(drag.at(-1), { type: 'pointer', x: to.gx, y: to.gy, buttons: 0 });
  assert.ok(drag.filter((m) => m.buttons === 1).length >= 5, JSON.stringify(drag));
});

test('two fingers moved up scroll down, moved left scroll right', async () => {
  const c = await spot(640, 400);
  const n0 = sent.length;
  await touch('touchStart', [[c.cx - 40, c.cy], [c.cx + 40, c.cy]]);
  for (let i = 1; i <= 10; i++) await touch('touchMove', [[c.cx - 40, c.cy - 10 * i], [c.cx + 40, c.cy - 10 * i]]);
  await touch('touchEnd', []);
  const n1 = sent.length;
  await touch('touchStart', [[c.cx, c.cy - 40], [c.cx, c.cy + 40]]);
  for (let i = 1; i <= 10; i++) await touch('touchMove', [[c.cx - 10 * i, c.cy - 40], [c.cx - 10 * i, c.cy + 40]]);
  await touch('touchEnd', []);
  const down = sent.slice(n0, n1).filter((m) => m.type === 'wheel');
  const right = sent.slice(n1).filter((m) => m.type === 'wheel');
  // 100 px at 30 px a notch: 3 notches, at the fingers' centre.
  assert.equal(down.reduce((s, m) => s + m.dy, 0), 3, JSON.stringify(down));
  assert.ok(down.every((m) => m.dx === 0 && m.x === c.gx && m.y < c.gy && m.y > c.gy - 130), JSON.stringify(down));
  assert.equal(right.reduce((s, m) => s + m.dx, 0), 3, JSON.stringify(right));
  assert.ok(right.every((m) => m.dy === 0), JSON.stringify(right));
  // No pointer press came of them, and the gateway took them (no error).
  assert.ok(!sent.slice(n0).some((m) => m.type === 'pointer'));
  await page.evaluate(() => window.vitrineLive.stream.ping());
  await waitFor('a pong after the wheels', () => received.filter((m) => m.type === 'pong').length > 0);
  assert.ok(!received.some((m) => m.type === 'error'), JSON.stringify(received.filter((m) => m.type === 'error')));
});

test('the key row sends Esc and Ctrl+Alt+Del, and latches Ctrl for the next key', async () => {
  let mark = consoleText().length;
  await page.click('#keyrow [data-key="Escape"]');
  await waitLine(mark, 'VITRINE key code=1');
  mark = consoleText().length;
  await page.click('#keyrow [data-combo]');
  await waitLine(mark, 'VITRINE key code=111');
  const keys = linesSince(mark).filter((l) => l.startsWith('VITRINE key code='));
  assert.deepEqual(keys, ['VITRINE key code=29', 'VITRINE key code=56', 'VITRINE key code=111']);
  // The keys are let go, Delete first.
  const n0 = sent.length;
  await page.click('#keyrow [data-mod="ControlLeft"]');
  assert.equal(await page.locator('#keyrow [data-mod="ControlLeft"]').getAttribute('class'), 'held');
  await page.screenshot({ path: join(process.env.VITRINE_WEB_SHOTS || g.dir, 'viewer-input.png') });
  await page.keyboard.press('KeyA');
  await waitFor('the latch to go', async () => (await page.locator('#keyrow [data-mod="ControlLeft"]').getAttribute('class')) === '');
  const seq = sent.slice(n0).filter((m) => m.type === 'key').map((m) => m.code + (m.down ? '+' : '-'));
  assert.deepEqual(seq, ['ControlLeft+', 'KeyA+', 'KeyA-', 'ControlLeft-']);
  assert.ok(await page.evaluate(() => document.activeElement.id === 'screen' || document.activeElement.className === 'vitrine-keys'), 'the view has the keyboard focus');
});

test('Fullscreen fills the screen with the view and gives it back', async () => {
  await page.click('#fullscreen');
  await page.waitForFunction(() => document.fullscreenElement && document.fullscreenElement.id === 'live-view' &&
    document.getElementById('fullscreen').textContent === 'Exit fullscreen');
  await page.click('#fullscreen');
  await page.waitForFunction(() => !document.fullscreenElement &&
    document.getElementById('fullscreen').textContent === 'Fullscreen');
});

test('a dropped connection shows reconnecting, then the view is live again with control', async () => {
  const frames = await page.evaluate(() => window.vitrineLive.stream.frames);
  // Every status line and banner shown from now on.
  await page.evaluate(() => {
    window.seen = [];
    const note = () => window.seen.push([document.getElementById('status').textContent.split(' | ')[0],
      !document.getElementById('link').hidden]);
    new MutationObserver(note).observe(document.getElementById('live-view'), { subtree: true, childList: true, attributes: true, characterData: true });
  });
  const hellos = await page.evaluate(() => window.vitrineLive.stream.connects);
  relay.cut();
  await page.waitForFunction(() => window.seen.some(([s, banner]) => /^reconnecting/.test(s) && banner),
    null, { timeout: 15000, polling: 100 }).catch(async (err) => {
    console.log('seen:', JSON.stringify(await page.evaluate(() => window.seen.slice(-10))));
    throw err;
  });
  await page.waitForFunction((n) => window.vitrineLive.stream.connects > n &&
    /^live/.test(document.getElementById('status').textContent) && window.vitrineLive.state.you === true,
  hellos, { timeout: 30000, polling: 100 });
  assert.equal(await page.locator('#link').isVisible(), false);
  // Frames again (a whole one first), and input reaches the guest.
  await page.waitForFunction((n) => window.vitrineLive.stream.frames > n, frames, { timeout: 30000 });
  const mark = consoleText().length;
  const a = await spot(1000, 650);
  await page.touchscreen.tap(a.cx, a.cy);
  await waitLine(mark, `VITRINE click x=${a.gx} y=${a.gy} button=left`);
  // The gateway saw one control change per socket: taken, released
  // (disconnected), taken again.
  const ev = await (await fetch(g.base + '/v1/sessions/' + sess.id + '/events', { headers: { Authorization: 'Bearer ' + g.key } })).json();
  const ctl = ev.events.filter((e) => e.type.startsWith('control_')).map((e) => e.type + (e.reason ? ':' + e.reason : ''));
  assert.deepEqual(ctl, ['control_taken', 'control_released:disconnected', 'control_taken']);
});

test('a connection cut during a paste and a clipboard read: the gateway stops typing, the viewer comes back', async () => {
  await page.locator('#screen').focus();
  await page.keyboard.press('Enter');
  const text = 'abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz';
  const mark = consoleText().length;
  await page.evaluate((t) => navigator.clipboard.writeText(t), text);
  await page.click('#paste');
  await waitLine(mark, 'VITRINE text=ab');
  await page.click('#copy'); // its answer never comes to this socket
  const hellos = await page.evaluate(() => window.vitrineLive.stream.connects);
  relay.cut();
  await page.waitForFunction((n) => window.vitrineLive.stream.connects > n &&
    /^live/.test(document.getElementById('status').textContent) && window.vitrineLive.state.you === true,
  hellos, { timeout: 30000, polling: 100 });
  // What was typed is where the text starts, however far it got.
  const typed = linesSince(mark).filter((l) => l.startsWith('VITRINE text=')).at(-1).slice('VITRINE text='.length);
  assert.ok(text.startsWith(typed), JSON.stringify(typed));
  // The new socket types again.
  const m2 = consoleText().length;
  await page.keyboard.press('Enter');
  await page.evaluate(() => navigator.clipboard.writeText('again'));
  await page.click('#paste');
  await waitLine(m2, 'VITRINE text=again');
});

test('the gateway exits cleanly after all that (no leak or sanitizer report)', async () => {
  await browser.close();
  browser = null;
  assert.equal(await stopGateway(g), 0);
  g = null;
});
