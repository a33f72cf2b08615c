// bench/bench_e2b.mjs: the unmodified E2B SDKs (e2b and @e2b/desktop, pinned
// in tests/e2b/package-lock.json) against Vitrine's native API doing the
// same, on desktop guests restored from a template, in one run (issue 15):
//  - create -> first command: Sandbox.create() then commands.run('true')
//    done, against POST /v1/sessions?wait=ready {template} then POST
//    .../exec true (each sandbox or session deleted after, untimed);
//  - screenshot(): the served scrot, files.read and the held file's remove,
//    against GET .../screenshot?format=png;
//  - leftClick(x, y): the served `xdotool mousemove` and `xdotool click 1`,
//    against POST .../actions left_click, plain (answers once sent) and with
//    the settle the served click waits for (the screen quiet for 150 ms, a
//    64-pixel JPEG): docs/e2b-desktop.md, "Differences";
//  - write() of 100 mixed-script characters (the SDK's 25-unit chunks, each
//    an `xdotool type` line the gateway serves) against POST .../actions
//    type of the same text, into a focused textarea, checked over the
//    gateway's CDP proxy;
//  - commands.run('true') (bash -l -c true in the guest) against POST
//    .../exec true and POST .../exec of bash -l -c true;
//  - `xdotool type --delay 75` of the same text in the SDK's chunks, run in
//    the guest (POST .../exec, DISPLAY=:0): what write() does in a plain E2B
//    guest, timed in the guest with date(1) and by the request, and how
//    many characters arrived in order (longest common subsequence).
// The steady operations run on one sandbox the SDK made (the native calls
// name its id with the operator key), so both see the same guest and page.
// Rounds are interleaved, who goes first alternating; one warm-up round is
// not counted. Prints p50/p95 and the ratios as a Markdown table.
//
// usage: node bench/bench_e2b.mjs [--rounds N] [--template NAME]
// It makes a desktop template with its page (one cold boot) and deletes it
// at the end; --template NAME restores from NAME instead, made with the
// page when it is not there yet, and kept (a template of another page
// gets the bench page opened in its sandbox). Run from the checkout's top (make
// bench-e2b); VITRINE_BIN names the gateway (default build/vitrine).
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { startGateway, stopGateway } from '../tests/e2b/gateway.mjs';

const require = createRequire(new URL('../tests/e2b/package.json', import.meta.url));
const { Sandbox } = require('@e2b/desktop');
const sdkVersion = (name) =>
  JSON.parse(readFileSync(require.resolve(`${name}/package.json`), 'utf8')).version;

// 100 code points (102 UTF-16 units, so the SDK's 25-unit chunks cut no
// emoji in two): the same text as bench/bench_input.c's mixed one.
const TEXT = 'Café déjà vu, naïve façade; Ærøskøbing, Łódź, Straße. ' +
  'Привет, мир! Съешь же ещё. 你好世界，漢字テスト。😀🚀 ok ñ!';
const XDOTOOL_DELAY = 75; // the SDK's default write() delay
const CHUNK = 25; // the SDK's default write() chunk (UTF-16 units)

// A textarea over most of the page, focused; no caret blinking, so a
// settle waits for the input's own effect only.
const PAGE = `<!doctype html><meta charset="utf-8"><title>bench-e2b</title>
<style>html,body{margin:0;height:100%}textarea{position:fixed;left:5%;top:5%;width:90%;
height:90%;font-size:18px;caret-color:transparent}</style>
<textarea id="t" autofocus spellcheck="false" autocomplete="off"></textarea>
<script>const t = document.getElementById('t');
window.benchReset = () => { t.value = ''; t.focus(); return document.activeElement === t; };
</script>`;

function usage() {
  console.error('usage: node bench/bench_e2b.mjs [--rounds 2..500] [--template NAME]');
  process.exit(2);
}

const opts = { rounds: 20, template: '' };
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (a === '--rounds' && i + 1 < process.argv.length) opts.rounds = Number(process.argv[++i]);
  else if (a === '--template' && i + 1 < process.argv.length) opts.template = process.argv[++i];
  else usage();
}
if (!Number.isInteger(opts.rounds) || opts.rounds < 2 || opts.rounds > 500) usage();

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const now = () => performance.now();
const log = (...a) => console.error('bench_e2b:', ...a);

// v[min(floor(n p), n - 1)] of the sorted values: tests/lib/stats.c's.
function pct(v, p) {
  const s = [...v].sort((a, b) => a - b);
  return s[Math.min(Math.floor(s.length * p), s.length - 1)];
}

// How many code points of want arrived in got, in order (the longest
// common subsequence), whatever was dropped or repeated around them.
function inOrder(want, got) {
  const a = [...want], b = [...got];
  let prev = new Array(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    const cur = [0];
    for (let j = 1; j <= b.length; j++)
      cur[j] = a[i - 1] === b[j - 1] ? prev[j - 1] + 1 : Math.max(prev[j], cur[j - 1]);
    prev = cur;
  }
  return prev[b.length];
}

// The SDK's write(): text.slice in chunks of CHUNK UTF-16 units.
const chunks = [];
for (let i = 0; i < TEXT.length; i += CHUNK) chunks.push(TEXT.slice(i, i + CHUNK));

let g = null; // the gateway
let templateMade = '';
let sbx = null; // the sandbox the steady operations run on
const H = () => ({ Authorization: 'Bearer ' + g.key, 'Content-Type': 'application/json' });

// A request to the native API with the operator key; wants a 2xx answer.
async function api(method, path, body) {
  const r = await fetch(g.base + path, {
    method, headers: H(), body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(600_000),
  });
  if (r.status < 200 || r.status > 299)
    throw new Error(`${method} ${path}: ${r.status} ${(await r.text()).slice(0, 300)}`);
  return r;
}
const apiJson = async (method, path, body) => (await api(method, path, body)).json();

// The page of session id, through the gateway's CDP proxy (the browser
// endpoint: the page target, a flat session), on one socket kept open.
class PageEval {
  constructor(id) { this.id = id; this.ws = null; }

  async open() {
    const ws = new WebSocket(`${g.base.replace('http', 'ws')}/v1/sessions/${this.id}/cdp`,
      { headers: { Authorization: 'Bearer ' + g.key } });
    this.ws = ws;
    this.n = 0;
    this.waiting = new Map();
    ws.onmessage = (m) => {
      const j = JSON.parse(m.data);
      const f = j.id && this.waiting.get(j.id);
      if (f) { this.waiting.delete(j.id); f(j); }
    };
    ws.onclose = () => {
      for (const f of this.waiting.values()) f({ error: 'the CDP socket closed' });
      this.waiting.clear();
      if (this.ws === ws) this.ws = null;
    };
    await new Promise((resolve, reject) => { ws.onopen = resolve; ws.onerror = reject; });
    const { targetInfos } = await this.call('Target.getTargets');
    const page = targetInfos.find((t) => t.type === 'page');
    if (!page) throw new Error('the guest has no page');
    this.session = (await this.call('Target.attachToTarget',
      { targetId: page.targetId, flatten: true })).sessionId;
  }

  call(method, params = {}, sessionId) {
    return new Promise((resolve, reject) => {
      const n = ++this.n;
      const timer = setTimeout(() => { this.waiting.delete(n); reject(new Error(`${method}: no answer in 20 s`)); }, 20_000);
      this.waiting.set(n, (j) => {
        clearTimeout(timer);
        if (j.error) reject(new Error(JSON.stringify(j.error))); else resolve(j.result);
      });
      this.ws.send(JSON.stringify({ id: n, method, params, ...(sessionId ? { sessionId } : {}) }));
    });
  }

  // expr's value; the socket is opened again when it failed (a Chromium
  // busy under TCG may leave DevTools unanswered for a while).
  async eval(expr) {
    for (let i = 0; ; i++) {
      try {
        if (!this.ws) await this.open();
        const r = await this.call('Runtime.evaluate', { expression: expr, returnByValue: true }, this.session);
        if (r.exceptionDetails) throw new Error(`${expr}: ${r.exceptionDetails.text}`);
        return r.result.value;
      } catch (e) {
        this.close();
        if (i >= 2) throw e;
        await sleep(500);
      }
    }
  }

  close() { const ws = this.ws; this.ws = null; if (ws) ws.close(); }
}

let page = null;

async function pageReset() {
  if (await page.eval('window.benchReset()') !== true)
    throw new Error('the textarea does not have the focus');
}

const fieldValue = () => page.eval('document.getElementById("t").value');

// Waits until the field holds want, or has not changed for three reads in
// a row, 30 s at most; returns what it holds.
async function settledValue(want) {
  let last = null, same = 0;
  const end = now() + 30_000;
  for (;;) {
    const v = await fieldValue();
    if (v === want || now() > end) return v;
    same = v === last ? same + 1 : 0;
    if (same >= 2) return v;
    last = v;
    await sleep(200);
  }
}

// Each measured series: label -> {ms: [...], notes: [...]}.
const series = new Map();
function note(label, ms, extra) {
  if (!series.has(label)) series.set(label, { ms: [], extra: [] });
  const s = series.get(label);
  s.ms.push(ms);
  if (extra !== undefined) s.extra.push(extra);
}

async function timed(fn) {
  const t0 = now();
  await fn();
  return now() - t0;
}

// The operations: each a list of ways, [label, run]; run(count) does the
// untimed set-up, times the operation and notes it when count is true.
const W = 640; // a click inside the textarea
const clickAt = (i) => [W + (i % 5) * 20, 420 + (i % 3) * 20];

const operations = [
  [
    ['create -> first command: SDK', async (count) => {
      let s = null;
      try {
        const ms = await timed(async () => {
          s = await Sandbox.create({ timeoutMs: 600_000 });
          await s.commands.run('true');
        });
        if (count) note('create -> first command: SDK', ms);
      } finally {
        if (s) await s.kill();
      }
    }],
    ['create -> first command: native', async (count) => {
      let id = '';
      try {
        const ms = await timed(async () => {
          id = (await apiJson('POST', '/v1/sessions?wait=ready', { template: TEMPLATE })).id;
          await apiJson('POST', `/v1/sessions/${id}/exec`, { cmd: 'true' });
        });
        if (count) note('create -> first command: native', ms);
      } finally {
        if (id) await api('DELETE', `/v1/sessions/${id}`);
      }
    }],
  ],
  [
    ['screenshot: SDK', async (count) => {
      let png;
      const ms = await timed(async () => { png = Buffer.from(await sbx.screenshot()); });
      if (png.subarray(1, 4).toString() !== 'PNG') throw new Error('screenshot(): not a PNG');
      if (count) note('screenshot: SDK', ms);
    }],
    ['screenshot: native', async (count) => {
      let png;
      const ms = await timed(async () => {
        png = Buffer.from(await (await api('GET', `/v1/sessions/${sbx.sandboxId}/screenshot?format=png`)).arrayBuffer());
      });
      if (png.subarray(1, 4).toString() !== 'PNG') throw new Error('GET .../screenshot: not a PNG');
      if (count) note('screenshot: native', ms);
    }],
  ],
  [
    // A click within 800 ms of the last waits out the rest (docs/api.md):
    // each starts after that.
    ['left click: SDK', async (count, i) => {
      await sleep(850);
      const ms = await timed(() => sbx.leftClick(...clickAt(i)));
      if (count) note('left click: SDK', ms);
    }],
    ['left click: native', async (count, i) => {
      await sleep(850);
      const ms = await timed(() => apiJson('POST', `/v1/sessions/${sbx.sandboxId}/actions`,
        { action: 'left_click', coordinate: clickAt(i) }));
      if (count) note('left click: native', ms);
    }],
    ['left click: native settled', async (count, i) => {
      await sleep(850);
      const ms = await timed(() => apiJson('POST', `/v1/sessions/${sbx.sandboxId}/actions`,
        { action: 'left_click', coordinate: clickAt(i),
          screenshot: { format: 'jpeg', quality: 10, width: 64, height: 64, quiet_ms: 150, timeout_ms: 3000 } }));
      if (count) note('left click: native settled', ms);
    }],
  ],
  [
    ['write: SDK', async (count) => {
      await pageReset();
      const ms = await timed(() => sbx.write(TEXT));
      const at = await fieldValue();
      const v = at === TEXT ? at : await settledValue(TEXT);
      if (count) note('write: SDK', ms, { exact: inOrder(TEXT, v), atAnswer: at === TEXT });
    }],
    ['write: native', async (count) => {
      await pageReset();
      const ms = await timed(() => apiJson('POST', `/v1/sessions/${sbx.sandboxId}/actions`,
        { action: 'type', text: TEXT }));
      const at = await fieldValue();
      const v = at === TEXT ? at : await settledValue(TEXT);
      if (count) note('write: native', ms, { exact: inOrder(TEXT, v), atAnswer: at === TEXT });
    }],
  ],
  [
    ['run true: SDK', async (count) => {
      const ms = await timed(() => sbx.commands.run('true'));
      if (count) note('run true: SDK', ms);
    }],
    ['run true: native', async (count) => {
      const ms = await timed(() => apiJson('POST', `/v1/sessions/${sbx.sandboxId}/exec`, { cmd: 'true' }));
      if (count) note('run true: native', ms);
    }],
    ['run true: native bash', async (count) => {
      const ms = await timed(() => apiJson('POST', `/v1/sessions/${sbx.sandboxId}/exec`,
        { cmd: '/bin/bash', args: ['-l', '-c', 'true'] }));
      if (count) note('run true: native bash', ms);
    }],
  ],
  [
    // What write() runs in a plain E2B guest, one chunk after another.
    ['xdotool', async (count) => {
      await pageReset();
      const script = 't0=$(date +%s%N); for c in "$@"; do ' +
        `xdotool type --delay ${XDOTOOL_DELAY} -- "$c" || exit 1; done; ` +
        't1=$(date +%s%N); echo "$t0 $t1"';
      let r;
      const ms = await timed(async () => {
        r = await apiJson('POST', `/v1/sessions/${sbx.sandboxId}/exec`,
          { cmd: '/bin/sh', args: ['-c', script, 'sh', ...chunks], env: { DISPLAY: ':0' }, timeout: 120 });
      });
      if (r.exit_code !== 0) throw new Error(`xdotool exited ${r.exit_code}: ${r.stderr}`);
      const [t0, t1] = r.stdout.trim().split(' ').map(BigInt);
      const v = await settledValue(TEXT);
      if (count) note('xdotool', ms, { guest: Number(t1 - t0) / 1e6, exact: inOrder(TEXT, v), got: [...v].length });
    }],
  ],
];

const TEMPLATE = opts.template || `benche2b${process.pid}`;

// Polls template TEMPLATE until its build ended; returns it.
async function templateBuilt() {
  for (const end = now() + 900_000; ;) {
    const t = await apiJson('GET', `/v1/templates/${TEMPLATE}`);
    if (t.status !== 'building') return t;
    if (now() > end) throw new Error('the template is not made in 15 minutes');
    await sleep(1000);
  }
}

async function makeTemplate() {
  const have = await fetch(`${g.base}/v1/templates/${TEMPLATE}`, { headers: H() });
  if (have.status === 200 && (await have.json()).status === 'ready') return;
  log(`making the desktop template ${TEMPLATE} (one cold boot)`);
  await api('POST', '/v1/templates', { name: TEMPLATE, image: 'desktop', page: PAGE });
  if (!opts.template) templateMade = TEMPLATE;
  let t = await templateBuilt();
  if (t.status === 'ready') return;
  // A desktop boot on a loaded TCG host can miss a build's 180 s for the
  // guest to be ready (a failed build leaves nothing); a session's boot
  // has 600 s: the template is then saved from one.
  log(`template: ${t.error}; from a session booted with the page instead`);
  const { id } = await apiJson('POST', '/v1/sessions', { image: 'desktop', page: PAGE });
  try {
    // (polled: fetch gives up on an answer's headers after 300 s)
    for (let st = 'starting'; st !== 'ready'; await sleep(1000)) {
      st = (await apiJson('GET', `/v1/sessions/${id}`)).status;
      if (st !== 'starting' && st !== 'ready') throw new Error(`the session to save is ${st}`);
    }
    await api('POST', '/v1/templates', { name: TEMPLATE, from_session: id });
    t = await templateBuilt();
  } finally {
    await api('DELETE', `/v1/sessions/${id}`);
  }
  if (t.status !== 'ready') throw new Error(`template: ${JSON.stringify(t)}`);
}

// Every session gone (sandboxes too: they are sessions), then the
// template this run made, then the gateway; each step tried whatever
// the one before did.
let cleaning = null;
function cleanup() {
  cleaning ??= (async () => {
    page?.close();
    if (!g) return;
    try {
      const { sessions } = await apiJson('GET', '/v1/sessions');
      for (const s of sessions) await api('DELETE', `/v1/sessions/${s.id}`).catch((e) => log(e.message));
      if (templateMade) await api('DELETE', `/v1/templates/${templateMade}`);
    } catch (e) {
      log('cleanup:', e.message);
    }
    const rc = await stopGateway(g);
    if (rc !== 0) log(`the gateway exited ${rc}`);
  })();
  return cleaning;
}
for (const sig of ['SIGINT', 'SIGTERM'])
  process.on(sig, () => { log(`${sig}: cleaning up`); cleanup().finally(() => process.exit(130)); });

const ms1 = (v) => (v < 10 ? v.toFixed(1) : v.toFixed(0));
const pp = (s) => `${ms1(pct(s.ms, 0.5))} / ${ms1(pct(s.ms, 0.95))}`;
const ratio = (a, b) => `${(pct(a.ms, 0.5) / pct(b.ms, 0.5)).toFixed(2)}x / ${(pct(a.ms, 0.95) / pct(b.ms, 0.95)).toFixed(2)}x`;

function report(screen) {
  const S = (l) => series.get(l);
  const exactOf = (s) => s.extra.filter((e) => e.exact === [...TEXT].length).length;
  const atAnswer = (s) => s.extra.filter((e) => e.atAnswer).length;
  const n = opts.rounds;
  console.log(`\nE2B SDK (e2b ${sdkVersion('e2b')}, @e2b/desktop ${sdkVersion('@e2b/desktop')}, Node ` +
    `${process.versions.node}) against the native API, desktop guest ${screen} restored from a ` +
    `template, ${n} rounds interleaved after one warm-up round; ms:\n`);
  console.log('| operation | SDK p50 / p95 | native p50 / p95 | SDK / native, p50 / p95 |');
  console.log('|---|---|---|---|');
  const row = (what, sdk, nat, natWhat = '') =>
    console.log(`| ${what} | ${pp(S(sdk))} | ${natWhat}${pp(S(nat))} | ${ratio(S(sdk), S(nat))} |`);
  row('create -> first command done', 'create -> first command: SDK', 'create -> first command: native');
  row('screenshot (PNG)', 'screenshot: SDK', 'screenshot: native');
  row('left click (native: answered once sent)', 'left click: SDK', 'left click: native');
  row('left click (native: settled as the served click, quiet 150 ms)', 'left click: SDK', 'left click: native settled');
  const ws = S('write: SDK'), wn = S('write: native');
  row(`write of 100 mixed characters (exact: SDK ${exactOf(ws)}/${n}, native ${exactOf(wn)}/${n}; ` +
    `in the field at the answer: ${atAnswer(ws)}/${n}, ${atAnswer(wn)}/${n})`, 'write: SDK', 'write: native');
  row("commands.run('true') (native: exec of `true`)", 'run true: SDK', 'run true: native');
  row("commands.run('true') (native: exec of `bash -l -c true`, what the SDK runs)", 'run true: SDK', 'run true: native bash');

  const x = S('xdotool');
  const guest = { ms: x.extra.map((e) => e.guest) };
  const arrived = x.extra.map((e) => e.exact);
  console.log(`\n\`xdotool type --delay ${XDOTOOL_DELAY}\` of the same text in the SDK's ${chunks.length} chunks, ` +
    'in the guest (POST .../exec), what write() runs in a plain E2B guest:\n');
  console.log('| | p50 / p95 | write() through the gateway (SDK), p50 | ratio p50 |');
  console.log('|---|---|---|---|');
  console.log(`| timed in the guest (date before and after) | ${pp(guest)} | ${ms1(pct(ws.ms, 0.5))} | ` +
    `${(pct(guest.ms, 0.5) / pct(ws.ms, 0.5)).toFixed(1)}x |`);
  console.log(`| the request (POST .../exec) | ${pp(x)} | ${ms1(pct(ws.ms, 0.5))} | ` +
    `${(pct(x.ms, 0.5) / pct(ws.ms, 0.5)).toFixed(1)}x |`);
  console.log(`\ncharacters of 100 that arrived in order, each round: ${arrived.join(' ')} ` +
    `(median ${pct(arrived, 0.5)}; the field held ${x.extra.map((e) => e.got).join(' ')})`);
}

let rc = 1;
try {
  g = await startGateway('benche2b', ['--e2b-default-template', TEMPLATE]);
  await makeTemplate();
  process.env.E2B_API_URL = g.base;
  process.env.E2B_SANDBOX_URL = g.base;
  process.env.E2B_API_KEY = g.key;
  process.env.E2B_DOMAIN = 'vitrine.test';
  sbx = await Sandbox.create({ timeoutMs: 3_600_000 });
  page = new PageEval(sbx.sandboxId);
  // A template of another page (--template) gets the bench page through
  // the SDK itself, as tests/e2b/desktop.test.mjs does.
  if (await page.eval('document.title') !== 'bench-e2b') {
    const path = '/home/vitrine/bench-e2b.html';
    await sbx.files.write(path, PAGE);
    await sbx.open('file://' + path);
    for (let i = 0; ; i++) {
      if (await page.eval('document.title + " " + document.readyState').catch(() => '') === 'bench-e2b complete') break;
      if (i >= 120) throw new Error('the bench page did not open within a minute');
      await sleep(500);
    }
  }
  const shot = await api('GET', `/v1/sessions/${sbx.sandboxId}/screenshot`);
  const screen = shot.headers.get('x-vitrine-screen');
  await shot.arrayBuffer();
  // The first click into Chromium's window after the restore activates it
  // (the window manager's click-to-focus): X's keyboard focus for xdotool.
  await apiJson('POST', `/v1/sessions/${sbx.sandboxId}/actions`, { action: 'left_click', coordinate: clickAt(0) });

  for (let i = -1; i < opts.rounds; i++) {
    const t0 = now();
    for (const ways of operations)
      for (let k = 0; k < ways.length; k++) {
        const [label, run] = ways[(k + Math.max(i, 0)) % ways.length];
        try {
          await run(i >= 0, i + 1);
        } catch (e) {
          throw new Error(`round ${i}, ${label}: ${e.stack || e.message}`);
        }
      }
    log(`round ${i < 0 ? 'warm-up' : i + 1}/${opts.rounds}: ${((now() - t0) / 1000).toFixed(1)} s`);
  }
  report(screen);
  rc = 0;
} catch (e) {
  log(e.stack || e.message);
} finally {
  await cleanup();
}
process.exit(rc);
