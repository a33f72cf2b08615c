// tests/web/viewer.test.mjs: the web viewer (web/) in Debian's headless
// Chromium through playwright-core, against `vitrine serve` with a tiny
// guest: the page shows the session's screen (its canvas matches a
// screenshot), a click in the viewer with a control token after "Take
// control" marks the guest's screen and typed keys reach it, a view token's
// click changes nothing,
// the session list makes sharing links, and it shows each session's state,
// age, usage and a thumbnail, refreshed in place; a recording of the
// session plays back (entries, scrubber, the frame at each action). Run by
// tests/run.sh:
//   VITRINE_BIN=build/vitrine "$(deploy/node.sh)" --test tests/web/*.test.mjs
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { startGateway, stopGateway } from './gateway.mjs';
import { waitFor } from './wait.mjs';

const chromiumPath = process.env.CHROMIUM || '/usr/bin/chromium';
const W = 1280, H = 800;
let g, base, key, sess, browser, dir;

before(async () => {
  g = await startGateway('web');
  ({ base, key, dir } = g);
  const r = await fetch(base + '/v1/sessions?wait=ready', {
    method: 'POST', headers: { Authorization: 'Bearer ' + key },
    body: JSON.stringify({ image: 'tiny', width: W, height: H }),
  });
  sess = await r.json();
  assert.equal(r.status, 201, JSON.stringify(sess));
  browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: ['--no-sandbox'] });
});

after(async () => {
  if (browser) await browser.close();
  await stopGateway(g);
});

// A page of the gateway's origin without the viewer's Content-Security-Policy
// (the API's answers carry none), for the decoding below: the viewer's own
// pages refuse eval, as they should.
let helper;
async function helperPage() {
  if (!helper) {
    helper = await browser.newPage();
    await helper.goto(base + '/healthz');
  }
  return helper;
}

// Runs fn(screen, arg) in the helper page, where screen is the
// guest's screen right now (a PNG screenshot from the gateway, decoded:
// {width, height, data: RGBA}); only fn's small answer crosses back.
async function withGuestScreen(page, fn, arg) {
  void page; // the screen is the guest's, whichever page shows it
  return (await helperPage()).evaluate(async ({ url, key, fnText, arg }) => {
    const r = await fetch(url, { headers: { Authorization: 'Bearer ' + key } });
    const bmp = await createImageBitmap(await r.blob());
    const c = new OffscreenCanvas(bmp.width, bmp.height), ctx = c.getContext('2d');
    ctx.drawImage(bmp, 0, 0);
    const screen = { width: bmp.width, height: bmp.height, data: ctx.getImageData(0, 0, bmp.width, bmp.height).data };
    return await (0, eval)('(' + fnText + ')')(screen, arg);
  }, { url: base + '/v1/sessions/' + sess.id + '/screenshot?format=png', key, fnText: fn.toString(), arg });
}

// Whether the tiny guest's click mark (pure red, 0xFF0000) is within 4 px of (x, y).
function markNear(img, [x, y]) {
  for (let dy = -4; dy <= 4; dy++) {
    for (let dx = -4; dx <= 4; dx++) {
      const i = ((y + dy) * img.width + (x + dx)) * 4;
      if (img.data[i] === 255 && img.data[i + 1] === 0 && img.data[i + 2] === 0) return true;
    }
  }
  return false;
}

// Pixels of the tiny guest's text colour (0xE0E0E0) in its text area: typed characters.
function typedPixels(img) {
  let n = 0;
  for (let y = img.height / 2 - 40; y < img.height / 2 + 40; y++) {
    for (let x = 16; x < img.width - 16; x++) {
      const i = (y * img.width + x) * 4;
      if (img.data[i] === 0xe0 && img.data[i + 1] === 0xe0 && img.data[i + 2] === 0xe0) n++;
    }
  }
  return n;
}

// Mean absolute difference per channel between the viewer's canvas (a PNG
// data URL of it) and img; runs in the helper page.
async function canvasDiff(img, canvasUrl) {
  const bmp = await createImageBitmap(await (await fetch(canvasUrl)).blob());
  const c = new OffscreenCanvas(bmp.width, bmp.height), ctx = c.getContext('2d');
  ctx.drawImage(bmp, 0, 0);
  const px = ctx.getImageData(0, 0, c.width, c.height).data;
  if (c.width !== img.width || c.height !== img.height) return { w: c.width, h: c.height, mean: 255 };
  let sum = 0;
  for (let i = 0; i < px.length; i += 4)
    sum += Math.abs(px[i] - img.data[i]) + Math.abs(px[i + 1] - img.data[i + 1]) + Math.abs(px[i + 2] - img.data[i + 2]);
  return { w: c.width, h: c.height, mean: sum / (px.length / 4 * 3) };
}

async function openViewer(token) {
  const page = await browser.newPage({ viewport: { width: 1100, height: 760 } });
  page.on('pageerror', (e) => console.log('page error:', e.message));
  await page.goto(base + '/web/#s=' + sess.id + '&t=' + token);
  await page.waitForFunction(() => window.vitrineLive && window.vitrineLive.stream.frames > 0, null, { timeout: 60000 });
  return page;
}

// Clicks the viewer's canvas where guest pixel (x, y) is shown.
async function clickGuest(page, x, y) {
  const box = await page.locator('#screen').boundingBox();
  await page.mouse.click(box.x + (x + 0.5) * box.width / W, box.y + (y + 0.5) * box.height / H);
}

test('the viewer shows the session screen: its canvas matches a screenshot', async () => {
  const page = await openViewer(sess.tokens.view);
  // The viewer's canvas as a PNG (its page allows no eval: the comparison
  // runs in the helper page).
  const canvasUrl = await page.evaluate(() => document.getElementById('screen').toDataURL('image/png'));
  const diff = await withGuestScreen(page, canvasDiff, canvasUrl);
  assert.equal(diff.w, W);
  assert.equal(diff.h, H);
  assert.ok(diff.mean < 3, 'mean difference ' + diff.mean);
  // Fit to the window: the canvas is shown scaled down, aspect kept.
  const box = await page.locator('#screen').boundingBox();
  assert.ok(box.width <= 1100 && Math.abs(box.width / box.height - W / H) < 0.01, JSON.stringify(box));
  await page.screenshot({ path: join(process.env.VITRINE_WEB_SHOTS || dir, 'viewer.png') });
  const status = await page.locator('#status').textContent();
  assert.match(status, /scope view/);
  await page.close();
});

test('with a control token, take control and a click in the viewer marks the guest', async () => {
  const page = await openViewer(sess.tokens.control);
  await page.click('#take');
  await page.waitForFunction(() => window.vitrineLive.state.you === true, null, { timeout: 30000 });
  assert.match(await page.locator('#status').textContent(), /control: you/);
  // The agent is refused meanwhile.
  const r = await fetch(base + '/v1/sessions/' + sess.id + '/actions', {
    method: 'POST', headers: { Authorization: 'Bearer ' + sess.tokens.control },
    body: JSON.stringify({ action: 'left_click', coordinate: [5, 5] }),
  });
  assert.equal(r.status, 409);
  assert.equal((await r.json()).error.code, 'controlled_by_viewer');
  await clickGuest(page, 400, 250);
  await waitFor('the mark at (400,250)', () => withGuestScreen(page, markNear, [400, 250]));
  // The viewer itself shows it too.
  await page.waitForFunction(() => {
    const c = document.getElementById('screen').getContext('2d');
    const p = c.getImageData(398, 250, 1, 1).data;
    return p[0] > 150 && p[1] < 100;
  }, null, { timeout: 30000 });
  // Keys typed in the viewer (it has focus since the click) reach the guest.
  assert.equal(await withGuestScreen(page, typedPixels), 0);
  await page.keyboard.type('hi');
  await waitFor('the typed text on the guest', async () => (await withGuestScreen(page, typedPixels)) > 20);
  await page.click('#release');
  await page.waitForFunction(() => window.vitrineLive.state.you === false, null, { timeout: 30000 });
  await page.close();
});

test('a view token only watches: its click changes nothing', async () => {
  const page = await openViewer(sess.tokens.view);
  assert.equal(await page.locator('#take').isDisabled(), true);
  // Even asking the socket directly is refused.
  await page.evaluate(() => window.vitrineLive.stream.take());
  await page.waitForFunction(() => /forbidden/.test(window.vitrineLive.state.error || ''), null, { timeout: 30000 });
  assert.equal(await withGuestScreen(page, markNear, [700, 500]), false);
  await clickGuest(page, 700, 500);
  await page.evaluate(() => window.vitrineLive.stream.pointer(700, 500, 1));
  await page.evaluate(() => window.vitrineLive.stream.pointer(700, 500, 0));
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(await withGuestScreen(page, markNear, [700, 500]), false);
  await page.close();
});

test('the session list makes sharing links that open the viewer', async () => {
  const page = await browser.newPage();
  await page.goto(base + '/');
  await page.fill('#key', key);
  await page.click('#key-form button');
  await page.waitForSelector('text=' + sess.id);
  await page.click('text=share view link');
  await page.waitForFunction(() => document.getElementById('share-url').value.includes('#s='));
  const url = await page.inputValue('#share-url');
  assert.ok(url.includes('#s=' + sess.id + '&t='), url);
  const viewer = await browser.newPage();
  await viewer.goto(url);
  await viewer.waitForFunction(() => window.vitrineLive && window.vitrineLive.stream.frames > 0, null, { timeout: 60000 });
  assert.match(await viewer.locator('#status').textContent(), /scope view/);
  await viewer.close();
  await page.close();
});

test('the session list shows state, age, usage and a thumbnail, refreshed in place', async () => {
  const page = await browser.newPage();
  page.on('pageerror', (e) => console.log('page error:', e.message));
  await page.goto(base + '/');
  await page.fill('#key', key);
  await page.click('#key-form button');
  const row = `tr[data-id="${sess.id}"]`;
  const cell = async (k) => page.locator(row + ' td.' + k).textContent();
  await page.waitForFunction((sel) => {
    const i = document.querySelector(sel + ' img.thumb');
    return i && i.complete && i.naturalWidth > 0;
  }, row, { timeout: 30000 });
  assert.equal(await cell('status'), 'ready');
  assert.equal(await cell('screen'), W + 'x' + H);
  assert.match(await cell('age'), /^\d+ (s|min \d+ s)$/);
  assert.match(await cell('usage'), /running, \d+ vCPU-s, \d+ GiB-s, \d+ actions, \d+ screenshots, \d+ commands$/);
  // The 1280x800 screen fitted into 320x200.
  assert.deepEqual(await page.evaluate((sel) => {
    const i = document.querySelector(sel + ' img.thumb');
    return [i.naturalWidth, i.naturalHeight];
  }, row), [320, 200]);
  const usage = async () => (await (await fetch(base + '/v1/sessions/' + sess.id,
    { headers: { Authorization: 'Bearer ' + key } })).json()).usage;
  const before = await usage();
  // The thumbnail's pixels around (250, 150). A 5x5 mark shrunk 4 times is
  // about one pixel, and the JPEG's chroma subsampling takes its red away:
  // what is left is a brighter blot, so the test looks for a change there.
  const around = () => page.evaluate((sel) => {
    const i = document.querySelector(sel + ' img.thumb');
    const c = document.createElement('canvas');
    c.width = i.naturalWidth;
    c.height = i.naturalHeight;
    const g = c.getContext('2d');
    g.drawImage(i, 0, 0);
    return Array.from(g.getImageData(247, 147, 7, 7).data);
  }, row);
  const px0 = await around();
  const changed = async () => (await around()).reduce((n, v, k) => n + Math.abs(v - px0[k]), 0);

  // An agent's click marks the guest's screen at (1000, 600): the thumbnail
  // shows the mark at a quarter of that, without a reload.
  const r = await fetch(base + '/v1/sessions/' + sess.id + '/actions', {
    method: 'POST', headers: { Authorization: 'Bearer ' + sess.tokens.control },
    body: JSON.stringify({ action: 'left_click', coordinate: [1000, 600] }),
  });
  assert.equal(r.status, 200);
  await waitFor('the mark in the thumbnail', async () => (await changed()) > 120, 30000);
  await waitFor('the usage cell to count the action', async () =>
    /, (\d+) actions/.exec(await cell('usage'))[1] === String(before.actions + 1), 15000);

  // A state change shows in the same row: pause in memory, then resume.
  const post = (what) => fetch(base + '/v1/sessions/' + sess.id + '/' + what,
    { method: 'POST', headers: { Authorization: 'Bearer ' + key } });
  assert.equal((await post('pause')).status, 200);
  await waitFor('the row to say paused', async () => (await cell('status')) === 'paused (memory)', 15000);
  assert.equal((await post('resume')).status, 200);
  await waitFor('the row to say ready', async () => (await cell('status')) === 'ready', 15000);
  assert.equal(await page.locator(row).count(), 1);

  // All the thumbnails the list fetched meanwhile were not the agent's use.
  const after = await usage();
  assert.equal(after.screenshots, before.screenshots);
  assert.equal(after.actions, before.actions + 1);
  await page.close();
});

// Mean absolute difference per channel between the replay's canvas and a
// JPEG given as base64 (both PNG/JPEG data URLs); runs in the helper page.
async function imageDiff({ canvasUrl, jpeg }) {
  const load = async (u) => {
    const bmp = await createImageBitmap(await (await fetch(u)).blob());
    const c = new OffscreenCanvas(bmp.width, bmp.height), g = c.getContext('2d');
    g.drawImage(bmp, 0, 0);
    return { w: c.width, h: c.height, px: g.getImageData(0, 0, c.width, c.height).data };
  };
  const a = await load(canvasUrl), b = await load('data:image/jpeg;base64,' + jpeg);
  if (a.w !== b.w || a.h !== b.h) return { w: a.w, h: a.h, mean: 255 };
  let sum = 0;
  for (let i = 0; i < a.px.length; i += 4)
    sum += Math.abs(a.px[i] - b.px[i]) + Math.abs(a.px[i + 1] - b.px[i + 1]) + Math.abs(a.px[i + 2] - b.px[i + 2]);
  return { w: a.w, h: a.h, mean: sum / (a.px.length / 4 * 3) };
}

test('a recording plays back in the viewer: entries beside the picture, the frame of each action', async () => {
  const auth = { Authorization: 'Bearer ' + key };
  const rec = (what) => fetch(base + '/v1/sessions/' + sess.id + '/recording/' + what, { method: 'POST', headers: auth });
  assert.equal((await rec('start')).status, 200);
  // Two clicks, each answered with its settled screenshot: the recording's
  // frame at each action's moment must be that picture.
  const shots = [];
  for (const [x, y] of [[300, 650], [900, 180]]) {
    const r = await fetch(base + '/v1/sessions/' + sess.id + '/actions', {
      method: 'POST', headers: { Authorization: 'Bearer ' + sess.tokens.control },
      body: JSON.stringify({ action: 'left_click', coordinate: [x, y], screenshot: true }),
    });
    assert.equal(r.status, 200);
    shots.push((await r.json()).screenshot.data);
    await new Promise((res) => setTimeout(res, 700));
  }
  assert.equal((await rec('stop')).status, 200);
  const tl = await (await fetch(base + '/v1/sessions/' + sess.id + '/recording', { headers: auth })).json();
  const acts = tl.entries.map((e, k) => ({ e, k })).filter(({ e }) => e.kind === 'action');
  assert.equal(acts.length, 2, JSON.stringify(tl.entries));
  const frameAt = (t) => tl.frames.filter((f) => f.t_ms <= t).length - 1;

  // The session's JSON links its replay; the list shows a link to it.
  const sj = await (await fetch(base + '/v1/sessions/' + sess.id, { headers: auth })).json();
  assert.equal(sj.urls.replay, base + '/web/#r=' + sess.id);
  assert.equal(sj.recording.frame_count, tl.frames.length);

  const page = await browser.newPage({ viewport: { width: 1400, height: 800 } });
  page.on('pageerror', (e) => console.log('page error:', e.message));
  await page.goto(base + '/web/#r=' + sess.id + '&t=' + sess.tokens.view);
  await page.waitForFunction(() => window.vitrineReplay && window.vitrineReplay.ready, null, { timeout: 30000 });
  assert.equal(await page.locator('#replay-entries li').count(), tl.entries.length);
  assert.match(await page.locator('#replay-entries li').nth(acts[1].k).textContent(), /left_click.*900,180.*-> 200/);
  assert.equal(await page.evaluate(() => window.vitrineReplay.frame), 0);

  for (let n = 0; n < 2; n++) {
    const { e, k } = acts[n];
    await page.locator('#replay-entries li').nth(k).click();
    const want = frameAt(e.t_ms + e.ms);
    await page.waitForFunction((w) => window.vitrineReplay.frame === w, want, { timeout: 15000 });
    assert.equal(await page.locator('#replay-entries li.current').count(), 1);
    const canvasUrl = await page.evaluate(() => document.getElementById('replay-screen').toDataURL('image/png'));
    const diff = await (await helperPage()).evaluate(imageDiff, { canvasUrl, jpeg: shots[n] });
    assert.equal(diff.w, W);
    assert.equal(diff.h, H);
    assert.ok(diff.mean < 4, 'action ' + n + ': frame ' + want + ' differs by ' + diff.mean);
    // The whole-screen difference cannot tell two frames apart that differ
    // only by a click mark: the marks can. The frame of the first action
    // has its mark and not yet the second's; that of the second has both.
    const marks = await page.evaluate((pts) => {
      const g = document.getElementById('replay-screen').getContext('2d');
      return pts.map(([x, y]) => {
        const p = g.getImageData(x - 3, y - 3, 7, 7).data;
        for (let i = 0; i < p.length; i += 4) if (p[i] > 150 && p[i + 1] < 110 && p[i + 2] < 110) return true;
        return false;
      });
    }, [[300, 650], [900, 180]]);
    assert.deepEqual(marks, [true, n === 1], 'marks in frame ' + want);
  }

  // The scrubber goes back to the start; Play (at 4x) runs to the end.
  await page.$eval('#replay-scrub', (el) => { el.value = '0'; el.dispatchEvent(new Event('input')); });
  await page.waitForFunction(() => window.vitrineReplay.frame === 0, null, { timeout: 15000 });
  await page.selectOption('#replay-speed', '4');
  await page.click('#replay-play');
  await page.waitForFunction((n) => !window.vitrineReplay.playing && window.vitrineReplay.frame === n,
    tl.frames.length - 1, { timeout: 30000 });
  assert.equal(await page.evaluate(() => window.vitrineReplay.t), tl.duration_ms);
  await page.close();

  // The session list links the recording.
  const list = await browser.newPage();
  await list.goto(base + '/');
  await list.fill('#key', key);
  await list.click('#key-form button');
  await list.waitForSelector(`tr[data-id="${sess.id}"] a.replay`);
  await list.close();
});

test('the gateway exits cleanly after all that (no leak or sanitizer report)', async () => {
  await browser.close();
  browser = null;
  assert.equal(await stopGateway(g), 0);
  g = null;
});
