// tests/web/websockify.test.mjs: noVNC's /websockify at the E2B desktop
// stream's URL (gateway/e2b/e2b_websockify.c, docs/e2b.md), driven by
// noVNC itself (npm @novnc/novnc's RFB, pinned in package.json) in Debian's
// headless Chromium, against `vitrine serve` with a tiny guest. The test
// serves noVNC's files and its page on a loopback port of its own, as
// E2B's novnc_proxy serves vnc.html, at http://6080-{id}.localhost:PORT/
// (Chromium sends *.localhost to loopback); the page's WebSocket goes to
// ws://6080-{id}.localhost:GATEWAY/websockify, so the gateway sees the
// SDK's Host. (A page Playwright fulfils itself has no address, and
// Chromium's local network checks keep its sockets from loopback.) The SDK's
// stream is started and stopped with the Process.Start calls
// @e2b/desktop's stream.start() and stop() send (docs/e2b-desktop.md).
// Checked: no connection before the start (502, noVNC fails) or for an
// unknown sandbox (404); noVNC's framebuffer is the guest's screen (the
// size, and the pixels of a screenshot); a click and keys through noVNC
// land in the guest and take the live view's control; `view_only=true`
// drops a client's input; stream.stop() closes the connection and refuses
// new ones; a raw client that stops reading is held back (the gateway's
// memory stays within 32 MiB where it would queue 100 MB) and then gets
// every byte in order; with requireAuth the SDK's password connects, a
// wrong one fails; the SDK's own URL (/vnc.html) opens the gateway's viewer
// on the 6080-{id}. host, whose stream socket's Origin is let in for that
// session (not another's, nor another site), and 100 more asks are
// rate-limited and leave the session's 32 sharing links free; the gateway
// stops cleanly with a client connected. Run by tests/run.sh like
// viewer.test.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import http from 'node:http';
import { join, dirname, extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startGateway, stopGateway } from './gateway.mjs';
import { waitFor } from './wait.mjs';
import { wsConnect } from './ws_raw.mjs';

const chromiumPath = process.env.CHROMIUM || '/usr/bin/chromium';
const novncDir = join(dirname(fileURLToPath(import.meta.url)), 'node_modules/@novnc/novnc');
const W = 640, H = 480;
const auditPath = join(tmpdir(), `vitrine-websockify-audit-${process.pid}.jsonl`);
let g, sess, browser, port, origin, web;

// The test's page: noVNC's RFB on a 640x480 canvas (no scaling), and a
// function that connects it and says how that went.
const testPage = `<!doctype html><meta charset=utf-8><body style="margin:0">
<div id=screen style="width:800px;height:600px"></div>
<script type=module>
import RFB from './core/rfb.js';
window.vnc = (path, password) => new Promise((resolve) => {
  const opts = password === undefined ? {} : { credentials: { password } };
  const url = 'ws://' + location.hostname + ':' + window.gatewayPort + path;
  const rfb = new RFB(document.getElementById('screen'), url, opts);
  rfb.scaleViewport = false;
  rfb.resizeSession = false;
  window.rfb = rfb;
  window.events = [];
  const done = (what) => { window.events.push(what); resolve(what); };
  rfb.addEventListener('connect', () => done({ connected: true }));
  rfb.addEventListener('securityfailure', (e) => done({ securityfailure: e.detail }));
  rfb.addEventListener('credentialsrequired', () => done({ credentialsrequired: true }));
  rfb.addEventListener('disconnect', (e) => done({ disconnected: e.detail }));
});
</script>`;

// One of the SDK's commands as envd's Process.Start (Connect, server
// streaming): the first frame (start{pid}) and, unless it lingers, the rest
// to its end; the answer's text.
async function sdkCommand(line, { lingers = false } = {}) {
  const msg = Buffer.from(JSON.stringify({ process: { cmd: '/bin/bash', args: ['-l', '-c', line] } }));
  const head = Buffer.alloc(5);
  head.writeUInt32BE(msg.length, 1);
  const ctl = new AbortController();
  const res = await fetch(g.base + '/process.Process/Start', {
    method: 'POST', signal: ctl.signal, body: Buffer.concat([head, msg]),
    headers: { 'E2b-Sandbox-Id': sess.id, 'X-Access-Token': sess.tokens.control, 'Content-Type': 'application/connect+json' },
  });
  assert.equal(res.status, 200);
  if (lingers) {
    const { value } = await res.body.getReader().read();
    ctl.abort(); // a background process: the SDK lets go of it too
    return Buffer.from(value).toString();
  }
  const text = Buffer.from(await res.arrayBuffer()).toString();
  assert.match(text, /"end":\{"exitCode":0|"end":\{"exited"/, line + ': ' + text);
  return text;
}

// stream.start({requireAuth}) and stream.stop() of @e2b/desktop 2.4.0.
async function streamStart(password) {
  if (password) await sdkCommand(`x11vnc -storepasswd ${password} ~/.vnc/passwd`);
  await sdkCommand(`x11vnc -bg -display :0 -forever -wait 50 -shared -rfbport 5900 ${password ? '-usepw' : '-nopw'} 2>/tmp/x11vnc_stderr.log`);
  await sdkCommand('cd /opt/noVNC/utils && ./novnc_proxy --vnc localhost:5900 --listen 6080 --web /opt/noVNC > /tmp/novnc.log 2>&1', { lingers: true });
}

async function streamStop() {
  await sdkCommand('pkill x11vnc');
}

before(async () => {
  // tests/run.sh installs tests/web's packages only when playwright-core
  // is missing: a checkout from before the noVNC pin needs `npm ci` there.
  assert.ok(existsSync(join(novncDir, 'core/rfb.js')), `no noVNC in ${novncDir}: run npm ci in tests/web`);
  g = await startGateway('websockify', ['--audit-log', auditPath]);
  const r = await fetch(g.base + '/v1/sessions?wait=ready', {
    method: 'POST', headers: { Authorization: 'Bearer ' + g.key },
    body: JSON.stringify({ image: 'tiny', width: W, height: H }),
  });
  sess = await r.json();
  assert.equal(r.status, 201, JSON.stringify(sess));
  port = new URL(g.base).port;
  // noVNC's files and the test's page (with the gateway's port in it).
  web = http.createServer((req, res) => {
    const rel = new URL(req.url, 'http://x').pathname.replace(/^\/novnc\//, '');
    if (rel === 'test.html') {
      res.setHeader('content-type', 'text/html');
      return res.end(testPage.replace('<script type=module>', `<script>window.gatewayPort = ${port};</script><script type=module>`));
    }
    let body;
    try {
      if (rel.includes('..')) throw new Error('no');
      body = readFileSync(join(novncDir, rel));
    } catch {
      res.statusCode = 404;
      return res.end();
    }
    res.setHeader('content-type', extname(rel) === '.js' ? 'text/javascript' : 'application/octet-stream');
    res.end(body);
  });
  await new Promise((r) => web.listen(0, '127.0.0.1', r));
  origin = `http://6080-${sess.id}.localhost:${web.address().port}`;
  browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: ['--no-sandbox'] });
});

// The gateway stops first, with the last test's noVNC still connected.
after(async () => {
  const code = await stopGateway(g);
  if (browser) await browser.close();
  if (web) web.close();
  rmSync(auditPath, { force: true });
  assert.equal(code, 0);
});

// A page at the stream's host with noVNC loaded (its files from npm).
async function novncPage() {
  const page = await browser.newPage({ viewport: { width: 820, height: 620 } });
  page.on('pageerror', (e) => console.log('page error:', e.message));
  await page.goto(origin + '/novnc/test.html');
  await page.waitForFunction(() => typeof window.vnc === 'function');
  return page;
}

// The gateway's own screenshot of the session, as base64 PNG.
async function screenshotB64() {
  const r = await fetch(`${g.base}/v1/sessions/${sess.id}/screenshot?format=png`, { headers: { Authorization: 'Bearer ' + g.key } });
  assert.equal(r.status, 200);
  return Buffer.from(await r.arrayBuffer()).toString('base64');
}

// Compares noVNC's canvas with a screenshot (in the page): sizes, and the
// mean difference per channel.
async function canvasVsScreenshot(page) {
  return page.evaluate(async (png) => {
    const bytes = Uint8Array.from(atob(png), (c) => c.charCodeAt(0));
    const bmp = await createImageBitmap(new Blob([bytes], { type: 'image/png' }));
    const oc = new OffscreenCanvas(bmp.width, bmp.height), octx = oc.getContext('2d');
    octx.drawImage(bmp, 0, 0);
    const want = octx.getImageData(0, 0, bmp.width, bmp.height).data;
    const c = document.querySelector('#screen canvas');
    const got = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    if (c.width !== bmp.width || c.height !== bmp.height)
      return { w: c.width, h: c.height, sw: bmp.width, sh: bmp.height, mean: 255 };
    let sum = 0;
    for (let i = 0; i < got.length; i += 4)
      sum += Math.abs(got[i] - want[i]) + Math.abs(got[i + 1] - want[i + 1]) + Math.abs(got[i + 2] - want[i + 2]);
    return { w: c.width, h: c.height, sw: bmp.width, sh: bmp.height, mean: sum / (got.length / 4 * 3) };
  }, await screenshotB64());
}

// Whether the gateway's screenshot has the tiny guest's click mark (pure
// red) within 4 px of (x, y).
async function markAt(page, x, y) {
  return page.evaluate(async ({ png, x, y }) => {
    const bytes = Uint8Array.from(atob(png), (c) => c.charCodeAt(0));
    const bmp = await createImageBitmap(new Blob([bytes], { type: 'image/png' }));
    const oc = new OffscreenCanvas(bmp.width, bmp.height), ctx = oc.getContext('2d');
    ctx.drawImage(bmp, 0, 0);
    const d = ctx.getImageData(x - 4, y - 4, 9, 9).data;
    for (let i = 0; i < d.length; i += 4) if (d[i] === 255 && d[i + 1] === 0 && d[i + 2] === 0) return true;
    return false;
  }, { png: await screenshotB64(), x, y });
}

// Clicks noVNC's canvas at guest pixel (x, y) (shown 1:1).
async function clickGuest(page, x, y) {
  const box = await page.locator('#screen canvas').boundingBox();
  await page.mouse.click(box.x + x + 0.5, box.y + y + 0.5);
}

// The tiny guest's last "VITRINE text=" console line: what is typed.
function guestText() {
  let last = null;
  for (const d of readdirSync(g.runBase).filter((n) => n.startsWith('vm-'))) {
    let log = '';
    try { log = readFileSync(join(g.runBase, d, 'serial.log'), 'utf8'); } catch { continue; }
    for (const m of log.matchAll(/VITRINE text=([^\r\n]*)/g)) last = m[1];
  }
  return last;
}

// The status of a GET with that Host (fetch cannot set it).
function plainGet(host, path) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, headers: { Host: host } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', reject);
    req.end();
  });
}

async function controlledBy() {
  const r = await fetch(`${g.base}/v1/sessions/${sess.id}`, { headers: { Authorization: 'Bearer ' + g.key } });
  return (await r.json()).controlled_by;
}

test('before stream.start: 502 and noVNC cannot connect; an unknown sandbox: 404', async () => {
  await assert.rejects(wsConnect(`ws://127.0.0.1:${port}/websockify`, { Host: `6080-${sess.id}.localhost:${port}` }),
    (e) => e.status === 502);
  await assert.rejects(wsConnect(`ws://127.0.0.1:${port}/websockify`, { Host: `6080-nosuch.localhost:${port}` }),
    (e) => e.status === 404);
  const page = await novncPage();
  const got = await page.evaluate(() => window.vnc('/websockify'));
  assert.ok(got.disconnected && !got.disconnected.clean, JSON.stringify(got));
  await page.close();
});

test('stream without auth: noVNC shows the guest screen, input lands, view_only drops it, stop closes', async () => {
  await streamStart();
  // A plain GET (no upgrade) says what this is.
  assert.equal(await plainGet(`6080-${sess.id}.localhost:${port}`, '/websockify'), 426);
  // The stream on another port than the SDK asked for is not running.
  await assert.rejects(wsConnect(`ws://127.0.0.1:${port}/websockify`, { Host: `6081-${sess.id}.localhost:${port}` }),
    (e) => e.status === 502);

  // A view-only client first: its click does not reach the guest.
  const viewer = await novncPage();
  assert.deepEqual(await viewer.evaluate(() => window.vnc('/websockify?view_only=true')), { connected: true });
  await viewer.waitForFunction(() => document.querySelector('#screen canvas')?.width === 640);
  assert.equal(await markAt(viewer, 500, 400), false);
  await clickGuest(viewer, 500, 400);
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(await markAt(viewer, 500, 400), false, 'a view-only client\'s click marks nothing');
  assert.equal(await controlledBy(), null);

  // A control client: its framebuffer is the guest's screen.
  const page = await novncPage();
  assert.deepEqual(await page.evaluate(() => window.vnc('/websockify')), { connected: true });
  await page.waitForFunction(() => document.querySelector('#screen canvas')?.width === 640);
  const diff = await waitFor('noVNC\'s canvas to match the screenshot', async () => {
    const d = await canvasVsScreenshot(page);
    return d.mean < 3 ? d : null;
  });
  assert.deepEqual([diff.w, diff.h, diff.sw, diff.sh], [W, H, W, H]);
  // Its click lands (where the view-only one did not), and takes control.
  await clickGuest(page, 500, 400);
  await waitFor('the click mark at (500,400)', () => markAt(page, 500, 400));
  assert.equal(await controlledBy(), 'VNC client');
  // noVNC shows it too (the view-only client as well).
  for (const p of [page, viewer])
    await p.waitForFunction(() => {
      const d = document.querySelector('#screen canvas').getContext('2d').getImageData(498, 400, 1, 1).data;
      return d[0] > 150 && d[1] < 100;
    }, null, { timeout: 30000 });
  // Keys, as keysyms: the tiny guest prints what is typed.
  await page.keyboard.type('vnc');
  await waitFor('the typed text on the guest', () => guestText() === 'vnc');
  // The agent's input waits meanwhile, as with any person in control.
  const act = await fetch(`${g.base}/v1/sessions/${sess.id}/actions`, {
    method: 'POST', headers: { Authorization: 'Bearer ' + g.key },
    body: JSON.stringify({ action: 'left_click', coordinate: [5, 5] }),
  });
  assert.equal(act.status, 409);

  // stream.stop(): the connections close, new ones are refused.
  await streamStop();
  for (const p of [page, viewer])
    await p.waitForFunction(() => window.events.some((e) => e.disconnected), null, { timeout: 10000 });
  await waitFor('control given back', async () => (await controlledBy()) === null);
  await assert.rejects(wsConnect(`ws://127.0.0.1:${port}/websockify`, { Host: `6080-${sess.id}.localhost:${port}` }),
    (e) => e.status === 502);
  await page.close();
  await viewer.close();
});

// A raw RFB client (no noVNC) over ws_raw.mjs: whole messages in, bytes
// out; need(n) waits for n bytes.
async function rawRfb(path = '/websockify') {
  const ws = await wsConnect(`ws://127.0.0.1:${port}${path}`, { Host: `6080-${sess.id}.localhost:${port}` });
  let buf = Buffer.alloc(0);
  const need = async (n) => {
    while (buf.length < n) buf = Buffer.concat([buf, (await ws.next()).data]);
    const b = buf.subarray(0, n);
    buf = buf.subarray(n);
    return b;
  };
  // Whether bytes are there, or come within ms (nothing waits on the
  // socket meanwhile, so whatever comes is kept).
  const buffered = async (ms) => {
    for (let end = Date.now() + ms; !buf.length && !ws.msgs.length && Date.now() < end;)
      await new Promise((r) => setTimeout(r, 50));
    while (ws.msgs.length) buf = Buffer.concat([buf, ws.msgs.shift().data]);
    return buf.length > 0;
  };
  return { ws, need, buffered };
}

// The gateway's resident memory, in KiB.
function gatewayRssKiB() {
  return Number(readFileSync(`/proc/${g.proc.pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)[1]);
}

test('a client that stops reading: the gateway holds back (bounded memory), then the bytes arrive intact', async () => {
  await streamStart();
  const { ws, need, buffered } = await rawRfb();
  assert.equal((await need(12)).toString(), 'RFB 003.008\n');
  ws.sendBinary(Buffer.from('RFB 003.008\n'));
  assert.deepEqual([...await need(2)], [1, 1]);
  ws.sendBinary(Buffer.from([1]));
  assert.deepEqual([...await need(4)], [0, 0, 0, 0]);
  ws.sendBinary(Buffer.from([1])); // ClientInit, shared
  const init = await need(24);
  assert.deepEqual([init.readUInt16BE(0), init.readUInt16BE(2), init[4]], [W, H, 32]);
  await need(init.readUInt32BE(20));
  // Raw only: each whole screen is 640*480*4 bytes. For 4 s the client
  // asks for one every 50 ms and reads nothing: a gateway that kept
  // reading the door would queue about 80 of them (100 MB).
  ws.sendBinary(Buffer.from([2, 0, 0, 1, 0, 0, 0, 0]));
  const rss0 = gatewayRssKiB();
  ws.s.pause();
  const whole = Buffer.from([3, 0, 0, 0, 0, 0, W >> 8, W & 255, H >> 8, H & 255]);
  for (let i = 0; i < 80; i++) {
    ws.sendBinary(whole);
    await new Promise((r) => setTimeout(r, 50));
  }
  const grown = gatewayRssKiB() - rss0;
  console.log(`# the gateway's RSS grew ${grown} KiB while the client did not read`);
  assert.ok(grown < 32 * 1024, `grew ${grown} KiB`);
  ws.s.resume();
  // Everything that comes is whole updates of raw rectangles tiling the
  // screen, back to back.
  const update = async () => {
    const head = await need(4);
    assert.equal(head[0], 0, 'a FramebufferUpdate');
    let area = 0;
    for (let n = head.readUInt16BE(2); n > 0; n--) {
      const r = await need(12);
      const w = r.readUInt16BE(4), h = r.readUInt16BE(6);
      assert.equal(r.readInt32BE(8), 0, 'raw');
      await need(w * h * 4);
      area += w * h;
    }
    return area;
  };
  let updates = 0;
  do {
    assert.equal(await update(), W * H);
    updates++;
  } while (await buffered(1500));
  console.log(`# ${updates} whole updates after the pause`);
  // Nothing lost or doubled on the way: the next update parses exactly.
  ws.sendBinary(Buffer.from([3, 0, 0, 0, 0, 0, 0, 10, 0, 10]));
  assert.equal(await update(), 100);
  ws.close();
  await streamStop();
});

// GET with that Host: the status and the Location.
function getWithHost(host, path) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, headers: { Host: host } }, (res) => {
      let body = '';
      res.on('data', (d) => { body += d; });
      res.on('end', () => resolve({ status: res.statusCode, location: res.headers.location, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('the SDK\'s URL in Chromium: /vnc.html\'s viewer on the 6080-{id}. host streams (its Origin let in for that session alone); 100 more requests leave the share table alone', async () => {
  await streamStart();
  const host = `6080-${sess.id}.localhost:${port}`;
  // The browser opens the URL the SDK gives; the viewer it is sent to
  // connects its stream socket with Origin http://6080-{id}.localhost:PORT
  // (no --origins given: the gateway's own URL alone is allowed).
  const page = await browser.newPage();
  page.on('pageerror', (e) => console.log('page error:', e.message));
  await page.goto(`http://${host}/vnc.html?autoconnect=true&resize=scale`);
  assert.match(page.url(), new RegExp(`/web/#s=${sess.id}&t=`));
  await page.waitForFunction(() => window.vitrineLive && window.vitrineLive.stream.frames > 0, null, { timeout: 30000 });
  await page.close();
  // Another sandbox's live host, another port's, another site: refused.
  const tok = (await getWithHost(host, '/vnc.html')).location.split('&t=')[1];
  const stream = `ws://127.0.0.1:${port}/v1/sessions/${sess.id}/stream`;
  await assert.rejects(wsConnect(stream, { Host: host, Origin: `http://6080-vmother1.localhost:${port}` }));
  await assert.rejects(wsConnect(stream, { Host: host, Origin: `http://6081-${sess.id}.localhost:${port}` }));
  await assert.rejects(wsConnect(stream, { Host: host, Origin: 'http://evil.localhost' }));
  const ok = await wsConnect(stream, { Host: host, Origin: `http://${host}` });
  ok.close();
  // 100 asks: the same link again while it lives, then 429 (JSON); the
  // session's 32 sharing links are all still there to make.
  const seen = new Set([tok]);
  const codes = {};
  for (let i = 0; i < 100; i++) {
    const r = await getWithHost(host, '/vnc.html');
    codes[r.status] = (codes[r.status] || 0) + 1;
    if (r.status === 302) seen.add(r.location.split('&t=')[1]);
    else assert.equal(JSON.parse(r.body).error.code, 'rate_limited');
  }
  assert.ok(codes[429] >= 80, JSON.stringify(codes));
  assert.equal(seen.size, 1, 'one control link, handed out again');
  for (let i = 0; i < 32; i++) {
    const r = await fetch(`${g.base}/v1/sessions/${sess.id}/share`, {
      method: 'POST', headers: { Authorization: 'Bearer ' + g.key }, body: JSON.stringify({ scope: 'view', ttl_s: 60 }),
    });
    assert.equal(r.status, 201, `share ${i}: ${await r.text()}`);
  }
  const del = await fetch(`${g.base}/v1/sessions/${sess.id}/share`, { method: 'DELETE', headers: { Authorization: 'Bearer ' + g.key } });
  assert.equal((await del.json()).revoked, 33, 'the 32 and the live view\'s link');
  await streamStop();
});

test('requireAuth: the SDK\'s password connects, a wrong one fails', async () => {
  const password = 'Zx81abcdEFGH2345'; // 16 characters, as the SDK makes them
  await streamStart(password);
  const page = await novncPage();
  const wrong = await page.evaluate(() => window.vnc('/websockify', 'Zx81abcX'));
  assert.ok(wrong.securityfailure, JSON.stringify(wrong));
  assert.equal(wrong.securityfailure.reason, 'the password is wrong');
  // An entry of the audit log.
  const audit = readFileSync(auditPath, 'utf8');
  assert.ok(audit.split('\n').filter(Boolean).map((l) => JSON.parse(l)).some((e) =>
    e.event === 'auth_refused' && e.session === sess.id && e.route === 'e2b' && e.status === 1008 && e.websocket), audit);
  // The password itself is in no log: its command is noted with stars.
  assert.ok(!audit.includes(password.slice(0, 8)), 'no password in the audit log');
  assert.ok(audit.includes('x11vnc -storepasswd ******** ~/.vnc/passwd'), audit);
  const none = await page.evaluate(() => window.vnc('/websockify'));
  assert.deepEqual(none, { credentialsrequired: true });
  await page.evaluate(() => window.rfb.disconnect());
  // VNC Authentication uses the first 8 characters, as x11vnc does.
  assert.deepEqual(await page.evaluate((pw) => window.vnc('/websockify', pw), password), { connected: true });
  await page.waitForFunction(() => document.querySelector('#screen canvas')?.width === 640);
  const diff = await waitFor('noVNC\'s canvas to match the screenshot', async () => {
    const d = await canvasVsScreenshot(page);
    return d.mean < 3 ? d : null;
  });
  assert.deepEqual([diff.w, diff.h], [W, H]);
  // Left connected, the stream running: the gateway stops so (after()).
});
