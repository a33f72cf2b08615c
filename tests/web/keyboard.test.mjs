// tests/web/keyboard.test.mjs: the web viewer's keyboard (web/keyboard.js)
// in Debian's headless Chromium against `vitrine serve` with a tiny guest
// (US layout; it prints the line typed so far on its console as
// "VITRINE text=..."): keys a person on a French AZERTY keyboard presses
// (KeyboardEvent.key and .code as that keyboard gives them: 'a' on KeyQ,
// '1' with Shift on Digit1, 'm' on Semicolon, 'z' on KeyW) type the
// person's characters, not those of the US positions; what an input method
// composes arrives as its text; Backspace still goes as a key. Run by
// tests/run.sh like viewer.test.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { startGateway, stopGateway } from './gateway.mjs';

const chromiumPath = process.env.CHROMIUM || '/usr/bin/chromium';
let g, sess, browser;

before(async () => {
  g = await startGateway('keys');
  const r = await fetch(g.base + '/v1/sessions?wait=ready', {
    method: 'POST', headers: { Authorization: 'Bearer ' + g.key },
    body: JSON.stringify({ image: 'tiny', width: 640, height: 480 }),
  });
  sess = await r.json();
  assert.equal(r.status, 201, JSON.stringify(sess));
  browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: ['--no-sandbox'] });
});

after(async () => {
  if (browser) await browser.close();
  assert.equal(await stopGateway(g), 0);
});

// The tiny guest's last "VITRINE text=" line: what is typed on its line.
function guestText() {
  let last = null;
  for (const d of readdirSync(g.runBase).filter((n) => n.startsWith('vm-'))) {
    let log = '';
    try { log = readFileSync(join(g.runBase, d, 'serial.log'), 'utf8'); } catch { continue; }
    for (const m of log.matchAll(/VITRINE text=([^\r\n]*)/g)) last = m[1];
  }
  return last;
}

async function waitText(want) {
  const end = Date.now() + 30000;
  let got;
  while ((got = guestText()) !== want) {
    if (Date.now() > end) assert.fail(`the guest's text is ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('keys of an AZERTY keyboard type the person\'s characters; composed text and Backspace arrive', async () => {
  const page = await browser.newPage();
  page.on('pageerror', (e) => console.log('page error:', e.message));
  await page.goto(g.base + '/web/#s=' + sess.id + '&t=' + sess.tokens.control);
  await page.waitForFunction(() => window.vitrineLive && window.vitrineLive.stream.frames > 0, null, { timeout: 60000 });
  await page.click('#take');
  await page.waitForFunction(() => window.vitrineLive.state.you === true, null, { timeout: 30000 });
  await page.click('#screen');
  // The keys take the focus from the canvas into their field.
  assert.equal(await page.evaluate(() => document.activeElement.className), 'vitrine-keys');
  await page.evaluate(() => {
    const f = document.activeElement;
    const key = (type, key, code, mods = {}) =>
      f.dispatchEvent(new KeyboardEvent(type, { key, code, bubbles: true, cancelable: true, ...mods }));
    const press = (k, code, mods) => { key('keydown', k, code, mods); key('keyup', k, code, mods); };
    press('a', 'KeyQ');
    key('keydown', 'Shift', 'ShiftLeft', { shiftKey: true });
    press('1', 'Digit1', { shiftKey: true });
    key('keyup', 'Shift', 'ShiftLeft');
    press('m', 'Semicolon');
    press('z', 'KeyW');
    // An input method's result.
    f.dispatchEvent(new CompositionEvent('compositionstart', { data: '' }));
    f.dispatchEvent(new CompositionEvent('compositionend', { data: 'xy' }));
  });
  await waitText('a1mzxy');
  // Not a character: a key, by its code.
  await page.evaluate(() => {
    const f = document.activeElement;
    for (const type of ['keydown', 'keyup'])
      f.dispatchEvent(new KeyboardEvent(type, { key: 'Backspace', code: 'Backspace', bubbles: true, cancelable: true }));
  });
  await waitText('a1mzx');
  await page.close();
});
