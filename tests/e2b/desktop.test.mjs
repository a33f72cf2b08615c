// tests/e2b/desktop.test.mjs: the unmodified @e2b/desktop SDK (pinned in
// package-lock.json) drives the desktop guest through Vitrine's E2B drop-in,
// its shell commands served by the gateway itself (docs/e2b-desktop.md).
// The sandbox is restored from the desktop template the e2e tests share
// (tests/lib/e2e_template.h: VITRINE_E2E_TEMPLATE, which tests/run.sh names;
// made here from the same page when it is not there yet), named by
// --e2b-default-template: the SDK's default "desktop" gets it, at the
// template's 1280x800, and the SDK's Xvfb line (resolution: 1024x768) sets
// the guest's screen to 1024x768 before create returns: every check below
// runs at that size. The test page goes in with files.write and opens with
// open(). Where the pointer and the text land is read from the page over
// the gateway's CDP proxy.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Sandbox } from '@e2b/desktop';
import { request } from 'node:http';
import { readFileSync } from 'node:fs';
import { qemuUnder, startGateway, stopGateway } from './gateway.mjs';

// Templates live in VITRINE_HOME, shared by every gateway there: the shared
// one, else a name of this run's own, deleted at the end.
const SHARED = process.env.VITRINE_E2E_TEMPLATE || '';
const TEMPLATE = SHARED || `e2bdesk${process.pid}`;
const PAGE_PATH = '/home/vitrine/e2bdesk.html';
const TEXT = 'Grüße, 世界 ✓ 🙂';
// The screen the SDK asks Xvfb for: not the template's.
const RES = [1024, 768];
// Every mouse event lands in window.log with the screen pixel it came at;
// the input at the top takes the typing, the page scrolls.
const PAGE = `<!doctype html><html><body style="margin:0;background:#fff">
<input id="i" style="position:absolute;left:40px;top:40px;width:500px;height:40px;font-size:24px">
<div style="height:4000px"></div>
<script>
window.log = []; window.keys = [];
for (const t of ['mousedown', 'mouseup', 'click', 'auxclick', 'dblclick', 'contextmenu'])
  addEventListener(t, (e) => { log.push([t, e.button, e.screenX, e.screenY, e.detail].join(' '));
    if (t === 'contextmenu') e.preventDefault(); }, true);
addEventListener('mousemove', (e) => { window.last = [e.screenX, e.screenY, e.clientX, e.clientY]; }, true);
addEventListener('keydown', (e) => keys.push(e.key), true);
</script></body></html>`;

let g, sbx, templateMade = false;
const auth = (t) => ({ Authorization: 'Bearer ' + t });

// One CDP expression evaluated in the guest's page, through the gateway's
// proxy (the browser endpoint: attach to the page target, flat sessions).
async function evalPage(expr) {
  const ws = new WebSocket(`${g.base.replace('http', 'ws')}/v1/sessions/${sbx.sandboxId}/cdp`,
    { headers: auth(g.key) });
  let id = 0;
  const waiting = new Map();
  ws.onmessage = (m) => {
    const j = JSON.parse(m.data);
    if (j.id && waiting.has(j.id)) waiting.get(j.id)(j);
  };
  const call = (method, params = {}, sessionId) => new Promise((resolve, reject) => {
    const n = ++id;
    waiting.set(n, (j) => (j.error ? reject(new Error(JSON.stringify(j.error))) : resolve(j.result)));
    ws.send(JSON.stringify({ id: n, method, params, ...(sessionId ? { sessionId } : {}) }));
  });
  const timer = setTimeout(() => ws.close(), 15000); // a stuck call fails, not hangs
  ws.onclose = () => { for (const f of waiting.values()) f({ error: 'the CDP socket closed' }); };
  await new Promise((resolve, reject) => { ws.onopen = resolve; ws.onerror = reject; });
  try {
    const { targetInfos } = await call('Target.getTargets');
    const page = targetInfos.find((t) => t.type === 'page');
    assert.ok(page, 'the guest has a page');
    const { sessionId } = await call('Target.attachToTarget', { targetId: page.targetId, flatten: true });
    const r = await call('Runtime.evaluate', { expression: expr, returnByValue: true }, sessionId);
    return r.result.value;
  } finally {
    clearTimeout(timer);
    ws.close();
  }
}

const pngSize = (b) => [b.readUInt32BE(16), b.readUInt32BE(20)];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The page's events since the last call.
const takeLog = () => evalPage('JSON.stringify(window.log.splice(0))').then(JSON.parse);

// A GET on the gateway with the Host header a TLS proxy would pass on.
function getWithHost(host, path) {
  const u = new URL(g.base);
  return new Promise((resolve, reject) => {
    const q = request({ host: u.hostname, port: u.port, path, headers: { Host: host } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res));
    });
    q.on('error', reject);
    q.end();
  });
}

before(async () => {
  g = await startGateway('e2bdesk', ['--e2b-default-template', TEMPLATE]);
  const H = { ...auth(g.key), 'Content-Type': 'application/json' };
  const have = await fetch(g.base + '/v1/templates/' + TEMPLATE, { headers: H });
  if (have.status !== 200 || (await have.json()).status !== 'ready') {
    const r = await fetch(g.base + '/v1/templates', {
      method: 'POST', headers: H,
      body: JSON.stringify({ name: TEMPLATE, image: 'desktop',
        page: readFileSync('tests/e2e/pages/life.html', 'utf8') }),
    });
    assert.equal(r.status, 202, await r.text());
    for (let i = 0; ; i++) {
      const t = await (await fetch(g.base + '/v1/templates/' + TEMPLATE, { headers: H })).json();
      if (t.status === 'ready') { templateMade = !SHARED; break; }
      assert.notEqual(t.status, 'failed', JSON.stringify(t));
      assert.ok(i < 600, 'the template is ready in 5 minutes');
      await sleep(500);
    }
  }
  process.env.E2B_API_URL = g.base;
  process.env.E2B_SANDBOX_URL = g.base;
  process.env.E2B_API_KEY = g.key;
  process.env.E2B_DOMAIN = 'vitrine.test';
  const tpl = await (await fetch(g.base + '/v1/templates/' + TEMPLATE, { headers: H })).json();
  assert.notDeepEqual([tpl.width, tpl.height], RES, 'the template is made at another size');
  sbx = await Sandbox.create({ resolution: RES, timeoutMs: 600_000 });
  // The test's page, through the SDK itself: a file, then open().
  await sbx.files.write(PAGE_PATH, PAGE);
  await sbx.open('file://' + PAGE_PATH);
  for (let i = 0; ; i++) {
    if (await evalPage('location.pathname').catch(() => '') === PAGE_PATH &&
        await evalPage('document.readyState') === 'complete') break;
    assert.ok(i < 120, 'the test page opened within a minute');
    await sleep(500);
  }
}, { timeout: 420_000 });

after(async () => {
  const runBase = g?.runBase;
  let deleted = 404;
  try {
    // (a template whose build failed is gone already; the shared one stays)
    if (g && templateMade) deleted = (await fetch(g.base + '/v1/templates/' + TEMPLATE, { method: 'DELETE', headers: auth(g.key) })).status;
  } finally {
    assert.equal(await stopGateway(g), 0, 'the gateway exits cleanly');
  }
  if (templateMade) assert.equal(deleted, 200, 'the template is deleted');
  if (runBase) assert.deepEqual(qemuUnder(runBase), [], 'no QEMU left');
});

test('the screen is the resolution asked: getScreenSize, screenshot, session, window', async () => {
  const size = await sbx.getScreenSize();
  assert.deepEqual([size.width, size.height], RES);
  const png = Buffer.from(await sbx.screenshot());
  assert.equal(png.subarray(1, 4).toString(), 'PNG');
  assert.deepEqual(pngSize(png), RES);
  const s = await (await fetch(`${g.base}/v1/sessions/${sbx.sandboxId}`, { headers: auth(g.key) })).json();
  assert.deepEqual([s.width, s.height], RES);
  const ev = await (await fetch(`${g.base}/v1/sessions/${sbx.sandboxId}/events`, { headers: auth(g.key) })).json();
  assert.ok(ev.events.some((e) => e.type === 'screen_resized' && e.width === RES[0] && e.height === RES[1]),
    JSON.stringify(ev.events));
  // Chromium's window (maximized under matchbox) fills the new screen.
  assert.deepEqual(await evalPage('[screen.width, screen.height, outerWidth, outerHeight]'), [...RES, ...RES]);
  // A move past the screen stops at its edge, as xdotool's does.
  await sbx.moveMouse(RES[0] + 500, RES[1] + 500);
  assert.deepEqual(await sbx.getCursorPosition(), { x: RES[0] - 1, y: RES[1] - 1 });
  // The held file is gone once the SDK removed it: a read now asks the guest.
  await sleep(200);
  const shots = (await sbx.commands.run('ls /tmp')).stdout;
  assert.doesNotMatch(shots, /screenshot-/);
});

test('moveMouse and getCursorPosition', async () => {
  await sbx.moveMouse(321, 234);
  assert.deepEqual(await sbx.getCursorPosition(), { x: 321, y: 234 });
  assert.deepEqual((await evalPage('window.last')).slice(0, 2), [321, 234]);
});

test('clicks of each button and a double click land on exact pixels', async () => {
  // The first click into Chromium's window, which has no focus after the
  // restore, activates it: the window manager's click-to-focus grab keeps
  // that click's release from the page. Click once on the blank page first.
  await sbx.leftClick(900, 500);
  await takeLog();
  await sbx.leftClick(601, 301);
  await sbx.rightClick(603, 303);
  await sbx.middleClick(605, 305);
  await sbx.doubleClick(607, 307);
  const log = await takeLog();
  const downs = log.filter((l) => l.startsWith('mousedown'));
  assert.deepEqual(downs, ['mousedown 0 601 301 1', 'mousedown 2 603 303 1',
    'mousedown 1 605 305 1', 'mousedown 0 607 307 1', 'mousedown 0 607 307 2'], log.join('\n'));
  assert.ok(log.includes('contextmenu 2 603 303 0'), log.join('\n'));
  assert.ok(log.includes('auxclick 1 605 305 1'), log.join('\n'));
  assert.ok(log.includes('dblclick 0 607 307 2'), log.join('\n'));
});

test('write arrives exactly in the page input, and press', async () => {
  // The input's middle on the screen: its page box moved by where the page
  // sits on the screen (Chromium's own bar is above it).
  await sbx.moveMouse(300, 300);
  const at = (await evalPage(`(() => { const r = document.getElementById('i').getBoundingClientRect();
    return [r.left + r.width / 2 + last[0] - last[2], r.top + r.height / 2 + last[1] - last[3]]; })()`)).map(Math.round);
  await takeLog();
  await sbx.leftClick(...at);
  assert.equal(await evalPage('document.activeElement.id'), 'i',
    `the click at ${at} focused the input: ${JSON.stringify(await takeLog())}`);
  await sbx.write(TEXT).catch((e) => assert.fail(`write: ${e.stderr || e.message}`));
  assert.equal(await evalPage('document.getElementById("i").value'), TEXT);
  await evalPage('window.keys.length = 0');
  await sbx.press('enter');
  await sbx.press(['ctrl', 'a']);
  await sbx.press('backspace');
  assert.deepEqual(await evalPage('window.keys'), ['Enter', 'Control', 'a', 'Backspace']);
  assert.equal(await evalPage('document.getElementById("i").value'), '');
});

test('scroll and drag', async () => {
  await sbx.moveMouse(700, 500);
  await sbx.scroll('down', 3);
  let y = 0;
  for (let i = 0; i < 20 && !(y > 0); i++) {
    y = await evalPage('window.scrollY');
    if (!(y > 0)) await sleep(100);
  }
  assert.ok(y > 0, 'the page scrolled down: ' + y);
  const down = y;
  await sbx.scroll('up', 2);
  for (let i = 0; i < 20 && y >= down; i++) {
    y = await evalPage('window.scrollY');
    if (y >= down) await sleep(100);
  }
  assert.ok(y < down, `and back up: ${down} -> ${y}`);
  await takeLog();
  await sbx.drag([650, 410], [720, 470]);
  const log = await takeLog();
  assert.ok(log.includes('mousedown 0 650 410 1'), log.join('\n'));
  assert.ok(log.includes('mouseup 0 720 470 1'), log.join('\n'));
});

test('stream: start, getUrl at the sandbox host, stop', async () => {
  await sbx.stream.start();
  const url = new URL(sbx.stream.getUrl());
  const host = `6080-${sbx.sandboxId}.vitrine.test`;
  assert.equal(url.host, host);
  assert.equal(url.pathname, '/vnc.html');
  // The gateway answers it by Host, as behind the operator's TLS proxy.
  let res = await getWithHost(host, url.pathname + url.search);
  assert.equal(res.statusCode, 302);
  const loc = new URL(res.headers.location, g.base);
  assert.equal(loc.pathname, '/web/');
  const frag = new URLSearchParams(loc.hash.slice(1));
  assert.equal(frag.get('s'), sbx.sandboxId);
  const hello = async (token) => {
    const ws = new WebSocket(`${g.base.replace('http', 'ws')}/v1/sessions/${sbx.sandboxId}/stream`);
    const first = new Promise((resolve, reject) => {
      ws.onmessage = (m) => { if (typeof m.data === 'string') resolve(JSON.parse(m.data)); };
      ws.onerror = reject;
    });
    await new Promise((resolve) => { ws.onopen = resolve; });
    ws.send(JSON.stringify({ type: 'auth', token }));
    const m = await first;
    ws.close();
    return m;
  };
  assert.equal((await hello(frag.get('t'))).scope, 'control');
  const viewUrl = new URL(sbx.stream.getUrl({ viewOnly: true }));
  res = await getWithHost(host, viewUrl.pathname + viewUrl.search);
  assert.equal(res.statusCode, 302);
  const vt = new URLSearchParams(new URL(res.headers.location, g.base).hash.slice(1)).get('t');
  assert.equal((await hello(vt)).scope, 'view');
  await sbx.stream.stop();
  res = await getWithHost(host, url.pathname + url.search);
  assert.equal(res.statusCode, 502, 'no view once the stream stopped');
  // With requireAuth the URL works with its password only.
  await sbx.stream.start({ requireAuth: true });
  const key = sbx.stream.getAuthKey();
  res = await getWithHost(host, '/vnc.html?autoconnect=true');
  assert.equal(res.statusCode, 401);
  const withKey = new URL(sbx.stream.getUrl({ authKey: key }));
  res = await getWithHost(host, withKey.pathname + withKey.search);
  assert.equal(res.statusCode, 302);
  await sbx.stream.stop();
  assert.equal((await getWithHost(`6080-nosuch.vitrine.test`, '/vnc.html')).statusCode, 404);
});

test('open goes to the URL in Chromium', async () => {
  await sbx.files.write('/tmp/opened.html', '<title>opened by e2b</title>');
  await sbx.open('file:///tmp/opened.html');
  let title = '';
  for (let i = 0; i < 50 && title !== 'opened by e2b'; i++) {
    try { title = await evalPage('document.title'); } catch { /* navigating */ }
    if (title !== 'opened by e2b') await sleep(200);
  }
  assert.equal(title, 'opened by e2b');
});

test('kill', async () => {
  await sbx.kill();
  const r = await fetch(`${g.base}/sandboxes/${sbx.sandboxId}`, { headers: { 'X-API-KEY': g.key } });
  assert.equal(r.status, 404);
});
