// tests/e2b/sdk.test.mjs: the unmodified E2B JavaScript SDK (2.51.0, and
// 2.45.0, which creates through the v1 path) drives Vitrine's E2B drop-in
// (docs/e2b.md) with E2B_API_URL and E2B_SANDBOX_URL set to the gateway,
// on the tiny guest. One sandbox carries most checks.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { AuthenticationError, CommandExitError, FileNotFoundError, InvalidArgumentError, Sandbox, TimeoutError } from 'e2b';
import { Sandbox as Sandbox245 } from 'e2b-245';
import { readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { qemuUnder, startGateway, stopGateway } from './gateway.mjs';
import { restartGateway } from '../web/gateway.mjs';

let g, sbx;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// Waits (polling) until cond() is true, failing after ms.
async function until(what, cond, ms = 20_000) {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await sleep(100);
  }
}
// The guest's watchers (vitrine-agent watch) as ps shows them.
const watchersInGuest = async () =>
  (await sbx.commands.run('ps')).stdout.split('\n').filter((l) => l.includes('vitrine-agent watch'));
const auditLog = join(tmpdir(), `vitrine-e2b-audit-${process.pid}.jsonl`);

before(async () => {
  g = await startGateway('e2b', ['--audit-log', auditLog, '--public-domain', 'vitrine.test']);
  process.env.E2B_API_URL = g.base;
  process.env.E2B_SANDBOX_URL = g.base;
  process.env.E2B_API_KEY = g.key;
  sbx = await Sandbox.create('tiny', {
    metadata: { suite: 'e2b-sdk', run: String(process.pid) },
    envs: { SANDBOX_VAR: 'from-create' },
    timeoutMs: 600_000,
  });
});

after(async () => {
  const runBase = g?.runBase;
  assert.equal(await stopGateway(g), 0, 'the gateway exits cleanly');
  rmSync(auditLog, { force: true });
  if (runBase) assert.deepEqual(qemuUnder(runBase), [], 'no QEMU left');
});

// One GET to the gateway's address with Host host (no DNS for it here);
// resolves {status, body}.
function getVia(host, path, headers = {}) {
  const { hostname, port } = new URL(g.base);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, path, headers: { ...headers, Host: host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { body += d; });
      res.on('end', () => resolve({ status: res.statusCode, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('getHost: a server in the sandbox answers at {port}-{id}.{domain} (the create answer names the domain)', async () => {
  await sbx.commands.run('mkdir -p /tmp/gh && echo from-guest > /tmp/gh/index.html && httpd -p 127.0.0.1:8123 -h /tmp/gh');
  const host = sbx.getHost(8123);
  assert.equal(host, `8123-${sbx.sandboxId}.vitrine.test`);
  assert.equal((await getVia(host, '/index.html')).status, 401, 'a port is closed without a token');
  const withKey = await getVia(host, '/index.html', { Authorization: `Bearer ${g.key}` });
  assert.deepEqual(withKey, { status: 200, body: 'from-guest\n' });
  // made public by its owner: the URL alone reaches it, as E2B's does
  const put = await fetch(`${g.base}/v1/sessions/${sbx.sandboxId}/ports/8123`, {
    method: 'PUT', headers: { Authorization: `Bearer ${g.key}` }, body: '{"public":true}',
  });
  assert.equal(put.status, 200);
  assert.deepEqual(await getVia(host, '/index.html'), { status: 200, body: 'from-guest\n' });
  assert.equal((await getVia(sbx.getHost(8124), '/')).status, 401, 'another port stays closed');
});

test('a wrong key gets 401', async () => {
  await assert.rejects(Sandbox.create('tiny', { apiKey: 'e2b_0123456789abcdef' }),
    (e) => e instanceof AuthenticationError);
  const res = await fetch(g.base + '/v2/sandboxes', { headers: { 'X-API-KEY': 'e2b_00' } });
  assert.equal(res.status, 401);
  const body = await res.json();
  assert.equal(body.code, 401);
  assert.equal(typeof body.message, 'string');
});

test('commands: stdout, stderr, exit codes, envs, cwd', async () => {
  const r = await sbx.commands.run('echo out; echo err >&2');
  assert.equal(r.exitCode, 0);
  assert.equal(r.stdout, 'out\n');
  assert.equal(r.stderr, 'err\n');
  await assert.rejects(sbx.commands.run('echo gone >&2; exit 3'), (e) => {
    assert.ok(e instanceof CommandExitError, String(e));
    assert.equal(e.exitCode, 3);
    assert.equal(e.stderr, 'gone\n');
    return true;
  });
  const env = await sbx.commands.run('echo "$SANDBOX_VAR $CMD_VAR"', { envs: { CMD_VAR: 'per-command' } });
  assert.equal(env.stdout, 'from-create per-command\n');
  const cwd = await sbx.commands.run('pwd', { cwd: '/tmp' });
  assert.equal(cwd.stdout, '/tmp\n');
});

test('commands: a timeout kills the process', async () => {
  const t0 = Date.now();
  await assert.rejects(sbx.commands.run('echo $$ > /tmp/timed.pid; sleep 30', { timeoutMs: 2000 }));
  assert.ok(Date.now() - t0 < 15000, 'it ended near its timeout');
  // The process was killed, not merely left behind by the client.
  let alive = '';
  for (let i = 0; i < 20; i++) {
    alive = (await sbx.commands.run('kill -0 $(cat /tmp/timed.pid) 2>/dev/null && echo alive || echo dead')).stdout;
    if (alive === 'dead\n') break;
    await new Promise((r) => setTimeout(r, 250));
  }
  assert.equal(alive, 'dead\n');
});

test('commands: background, list, stdin, kill', async () => {
  const bg = await sbx.commands.run('sleep 60', { background: true });
  assert.ok(bg.pid > 0);
  const listed = await sbx.commands.list();
  assert.ok(listed.some((p) => p.pid === bg.pid), 'the background process is listed');
  assert.equal(await sbx.commands.kill(bg.pid), true);
  await assert.rejects(bg.wait());
  const after = await sbx.commands.list();
  assert.ok(!after.some((p) => p.pid === bg.pid), 'a killed process leaves the list');

  let seen = '';
  const cat = await sbx.commands.run('cat', { background: true, stdin: true, onStdout: (d) => { seen += d; } });
  await cat.sendStdin('hello stdin\n');
  for (let i = 0; i < 100 && !seen.includes('hello stdin'); i++) await new Promise((r) => setTimeout(r, 50));
  assert.equal(seen, 'hello stdin\n');
  await cat.kill();
});

test('PTYs: create, sendInput, resize, kill, on a real terminal in the guest', async () => {
  let out = '';
  const dec = new TextDecoder();
  const enc = (t) => new TextEncoder().encode(t);
  const pty = await sbx.pty.create({ cols: 80, rows: 24, timeoutMs: 0,
    onData: (d) => { out += dec.decode(d, { stream: true }); } });
  assert.ok(pty.pid > 0);
  await sbx.pty.sendInput(pty.pid, enc('stty size; tty; echo "[$TERM]"\n'));
  await until('the terminal\'s size', () => /24 80/.test(out));
  await until('its name and TERM', () => /\/dev\/pts\/\d+/.test(out) && out.includes('[xterm-256color]'));
  await sbx.pty.resize(pty.pid, { cols: 100, rows: 30 });
  await sbx.pty.sendInput(pty.pid, enc('stty size\n'));
  await until('the new size', () => /30 100/.test(out));
  assert.ok(out.includes('stty size\r\n'), 'the terminal echoes what is typed');
  assert.equal(await sbx.pty.kill(pty.pid), true);
  const end = await pty.wait().catch((e) => e);
  assert.equal(end.exitCode, -1, 'killed');
  assert.equal(await sbx.pty.kill(pty.pid), false, 'gone');
  // E2B's own cases: envs and exit 0; a terminal disconnected and connected again.
  let out2 = '', out3 = '';
  const t2 = await sbx.pty.create({ cols: 80, rows: 24, envs: { ABC: '123' },
    onData: (d) => { out2 += dec.decode(d); } });
  await sbx.pty.sendInput(t2.pid, enc('echo "[$ABC]"\nexit\n'));
  await t2.wait();
  assert.equal(t2.exitCode, 0);
  assert.ok(out2.includes('[123]'), out2);
  const t3 = await sbx.pty.create({ cols: 80, rows: 24, timeoutMs: 0, onData: () => {} });
  await t3.disconnect();
  const again = await sbx.pty.connect(t3.pid, { onData: (d) => { out3 += dec.decode(d); } });
  await sbx.pty.sendInput(t3.pid, enc('echo "[again]"\nexit\n'));
  await again.wait();
  assert.equal(again.exitCode, 0);
  assert.ok(out3.includes('[again]'), out3);
  // A process without a terminal has no size to change.
  const plain = await sbx.commands.run('sleep 60', { background: true });
  await assert.rejects(sbx.pty.resize(plain.pid, { cols: 10, rows: 10 }), /no terminal/);
  await plain.kill();
});

test('Process/StreamInput (client streaming, sent raw) and Update through Connect', async () => {
  let seen = '';
  const cat = await sbx.commands.run('cat', { background: true, stdin: true, onStdout: (d) => { seen += d; } });
  const env = (flags, obj) => {
    const b = Buffer.from(JSON.stringify(obj));
    const h = Buffer.alloc(5);
    h[0] = flags;
    h.writeUInt32BE(b.length, 1);
    return Buffer.concat([h, b]);
  };
  const headers = { 'E2b-Sandbox-Id': sbx.sandboxId, 'X-Access-Token': sbx.envdAccessToken,
    'Content-Type': 'application/connect+json' };
  const body = Buffer.concat([env(0, { start: { process: { pid: cat.pid } } }),
    env(0, { data: { input: { stdin: Buffer.from('one ').toString('base64') } } }),
    env(0, { keepalive: {} }),
    env(0, { data: { input: { stdin: Buffer.from('two\n').toString('base64') } } })]);
  const res = await fetch(g.base + '/process.Process/StreamInput', { method: 'POST', headers, body });
  assert.equal(res.status, 200);
  const answer = Buffer.from(await res.arrayBuffer());
  // StreamInputResponse {}, then the end of the stream without an error
  assert.deepEqual([...answer], [...env(0, {}), ...env(2, {})]);
  await until('the streamed input', () => seen === 'one two\n');
  const bad = await fetch(g.base + '/process.Process/StreamInput', { method: 'POST', headers,
    body: env(0, { data: { input: { stdin: 'AA==' } } }) });
  const text = Buffer.from(await bad.arrayBuffer()).toString();
  assert.match(text, /invalid_argument/);
  assert.match(text, /data before start/);
  await cat.kill();
});

test('commands: a disconnected client leaves its process running; connect re-attaches', async () => {
  const bg = await sbx.commands.run('sleep 1; echo later; echo done > /tmp/disc', { background: true, timeoutMs: 0 });
  await bg.disconnect();
  const again = await sbx.commands.connect(bg.pid);
  const r = await again.wait();
  assert.equal(r.exitCode, 0);
  assert.equal(r.stdout, 'later\n');
  assert.equal(await sbx.files.read('/tmp/disc'), 'done\n');
});

test('envd by Host (49983-{id}.{domain}, behind a TLS proxy)', async () => {
  const call = (path, method, headers, body) => new Promise((resolve, reject) => {
    const u = new URL(g.base);
    const req = request({ host: u.hostname, port: u.port, path, method,
      headers: { Host: `49983-${sbx.sandboxId}.e2b.example.test`, ...headers } }, (res) => {
      let data = '';
      res.on('data', (d) => { data += d; });
      res.on('end', () => resolve({ status: res.statusCode, body: data }));
    });
    req.on('error', reject);
    req.end(body);
  });
  assert.equal((await call('/health', 'GET', {})).status, 204);
  const listed = await call('/process.Process/List', 'POST',
    { 'Content-Type': 'application/json', 'X-Access-Token': sbx.envdAccessToken }, '{}');
  assert.equal(listed.status, 200);
  assert.ok(Array.isArray(JSON.parse(listed.body).processes));
  const denied = await call('/process.Process/List', 'POST', { 'Content-Type': 'application/json' }, '{}');
  assert.equal(denied.status, 401);
  assert.equal(JSON.parse(denied.body).code, 'unauthenticated');
});

test('files: every byte value written and read back', async () => {
  const all = new Uint8Array(256).map((_, i) => i);
  await sbx.files.write('/tmp/all-bytes.bin', all);
  const back = await sbx.files.read('/tmp/all-bytes.bin', { format: 'bytes' });
  assert.deepEqual(Buffer.from(back), Buffer.from(all));
  await sbx.files.write('notes/hello.txt', 'Grüße ✓\n');
  assert.equal(await sbx.files.read('notes/hello.txt'), 'Grüße ✓\n');
  const home = await sbx.commands.run('cat /home/vitrine/notes/hello.txt');
  assert.equal(home.stdout, 'Grüße ✓\n');
  await assert.rejects(sbx.files.read('/tmp/no-such-file'));
  // a multipart upload (the SDK's default) streamed through the gateway, of
  // several MiB, past the 1 MiB of other request bodies and the 4 MiB of old
  const big = new Uint8Array(12 << 20).map((_, i) => (i * 7 + (i >> 13)) & 255);
  await sbx.files.write('/tmp/big.bin', big);
  assert.ok(Buffer.from(await sbx.files.read('/tmp/big.bin', { format: 'bytes' })).equals(Buffer.from(big)));
  await sbx.commands.run('head -c 5000000 /dev/zero > /tmp/huge.bin');
  assert.equal((await sbx.files.read('/tmp/huge.bin', { format: 'bytes' })).length, 5000000);
});

test('files: several files in one multipart upload, each to its path', async () => {
  const written = await sbx.files.write([
    { path: '/tmp/multi/a.txt', data: 'first' },
    { path: 'multi/b.bin', data: new Uint8Array(3 << 20).fill(0x5a) },
    { path: '/tmp/multi/c.txt', data: '' },
  ]);
  assert.deepEqual(written.map((w) => w.path), ['/tmp/multi/a.txt', '/home/vitrine/multi/b.bin', '/tmp/multi/c.txt']);
  assert.equal(await sbx.files.read('/tmp/multi/a.txt'), 'first');
  assert.equal((await sbx.files.read('multi/b.bin', { format: 'bytes' })).length, 3 << 20);
  assert.equal(await sbx.files.read('/tmp/multi/c.txt'), '');
});

test('files: gzip both ways (Content-Encoding and Accept-Encoding, as envd)', async () => {
  const text = 'gzip round trip ✓\n'.repeat(200_000); // ~4 MiB, compresses well
  const w = await sbx.files.write('/tmp/gz.txt', text, { gzip: true });
  assert.equal(w.path, '/tmp/gz.txt');
  assert.equal((await sbx.commands.run('wc -c < /tmp/gz.txt')).stdout.trim(), String(Buffer.byteLength(text)));
  assert.equal(await sbx.files.read('/tmp/gz.txt', { gzip: true }), text);
  // on the wire: the gateway says gzip, and the bytes are gzip's
  const res = await fetch(`${g.base}/files?path=/tmp/gz.txt`, {
    headers: { 'E2b-Sandbox-Id': sbx.sandboxId, 'X-Access-Token': sbx.envdAccessToken ?? '', 'Accept-Encoding': 'gzip' },
  });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-encoding'), 'gzip');
  // a body that is not gzip is refused (400, as envd), the file left as it was
  const bad = await fetch(`${g.base}/files?path=/tmp/gz.txt`, {
    method: 'POST',
    headers: { 'E2b-Sandbox-Id': sbx.sandboxId, 'X-Access-Token': sbx.envdAccessToken ?? '',
      'Content-Type': 'application/octet-stream', 'Content-Encoding': 'gzip' },
    body: 'not gzip at all',
  });
  assert.equal(bad.status, 400);
  assert.equal(await sbx.files.read('/tmp/gz.txt'), text);
});

test('files: list, exists, getInfo, makeDir, rename, remove (filesystem.Filesystem)', async () => {
  assert.equal(await sbx.files.makeDir('/tmp/fs/sub'), true);
  assert.equal(await sbx.files.makeDir('/tmp/fs/sub'), false, 'already there');
  await sbx.files.write('/tmp/fs/a.txt', 'hello');
  const listed = await sbx.files.list('/tmp/fs');
  assert.deepEqual(listed.map((e) => [e.name, e.type, e.path]).sort(),
    [['a.txt', 'file', '/tmp/fs/a.txt'], ['sub', 'dir', '/tmp/fs/sub']]);
  const a = listed.find((e) => e.name === 'a.txt');
  assert.equal(a.size, 5);
  assert.ok(Math.abs(a.modifiedTime.getTime() - Date.now()) < 600_000, 'a plausible mtime');
  assert.equal((await sbx.files.list('/tmp/fs', { depth: 2 })).length, 2);
  assert.equal(await sbx.files.exists('/tmp/fs/a.txt'), true);
  assert.equal(await sbx.files.exists('/tmp/fs/none'), false);
  const moved = await sbx.files.rename('/tmp/fs/a.txt', '/tmp/fs/sub/b.txt');
  assert.equal(moved.path, '/tmp/fs/sub/b.txt');
  assert.equal(await sbx.files.read('/tmp/fs/sub/b.txt'), 'hello');
  assert.equal((await sbx.files.getInfo('/tmp/fs/sub')).type, 'dir');
  await sbx.files.remove('/tmp/fs');
  assert.equal(await sbx.files.exists('/tmp/fs'), false);
  await assert.rejects(sbx.files.list('/tmp/fs'));
});

test('files: symlinks carry their resolved target, type and mode (envd\'s EntryInfo)', async () => {
  await sbx.commands.run('mkdir -p /tmp/ln/sub && printf hi > /tmp/ln/f && chmod 640 /tmp/ln/f && ' +
    'cd /tmp/ln && ln -s f lf && ln -s sub ld && ln -s nowhere dead && ln -s lf chain');
  const byName = Object.fromEntries((await sbx.files.list('/tmp/ln')).map((e) => [e.name, e]));
  // a dangling link has no type: the SDK leaves it out of a list (as of envd's)
  assert.deepEqual(Object.keys(byName).sort(), ['chain', 'f', 'ld', 'lf', 'sub']);
  assert.equal(byName.lf.symlinkTarget, '/tmp/ln/f');
  assert.equal(byName.lf.type, 'file');
  assert.equal(byName.lf.mode, 0o640);
  assert.equal(byName.chain.symlinkTarget, '/tmp/ln/f', 'resolved all the way');
  assert.equal(byName.ld.symlinkTarget, '/tmp/ln/sub');
  assert.equal(byName.ld.type, 'dir');
  const dead = await sbx.files.getInfo('/tmp/ln/dead');
  assert.equal(dead.symlinkTarget, '/tmp/ln/dead', 'a dangling link names itself');
  assert.equal(dead.type, undefined);
  assert.equal(byName.f.symlinkTarget, undefined);
  const info = await sbx.files.getInfo('/tmp/ln/lf');
  assert.equal(info.symlinkTarget, '/tmp/ln/f');
  assert.equal(info.path, '/tmp/ln/lf');
  await sbx.files.remove('/tmp/ln');
});

test('files.watchDir: create, write, rename, chmod, remove; recursive or not; stop ends it', async () => {
  await sbx.files.makeDir('/tmp/watched/sub');
  const flat = [], deep = [];
  const hFlat = await sbx.files.watchDir('/tmp/watched', (e) => flat.push([e.type, e.name]));
  const hDeep = await sbx.files.watchDir('/tmp/watched', (e) => deep.push([e.type, e.name]), { recursive: true });
  assert.equal((await watchersInGuest()).length, 2, 'one watcher in the guest each');
  await sbx.commands.run('cd /tmp/watched && printf hi > a.txt && mv a.txt b.txt && ' +
    'printf deep > sub/deep.txt && chmod 600 b.txt && rm b.txt');
  const top = [['create', 'a.txt'], ['write', 'a.txt'], ['rename', 'a.txt'], ['create', 'b.txt'],
    ['chmod', 'b.txt'], ['remove', 'b.txt']];
  await until('the recursive watch\'s events', () => deep.length >= 8);
  await until('the flat watch\'s events', () => flat.length >= 6);
  assert.deepEqual(flat, top);
  assert.deepEqual(deep.filter(([, n]) => !n.startsWith('sub/')), top);
  assert.deepEqual(deep.filter(([, n]) => n.startsWith('sub/')),
    [['create', 'sub/deep.txt'], ['write', 'sub/deep.txt']]);

  // a tree made at once: the recursive watch follows it down
  await sbx.commands.run('mkdir -p /tmp/watched/n1/n2 && printf x > /tmp/watched/n1/n2/f');
  await until('the new tree\'s file', () => deep.some(([t, n]) => t === 'create' && n === 'n1/n2/f'));
  for (const n of ['n1', 'n1/n2'])
    assert.ok(deep.some(([t, m]) => t === 'create' && m === n), `${n} created`);
  await until('the flat watch sees n1', () => flat.some(([t, n]) => t === 'create' && n === 'n1'));
  assert.deepEqual(flat.filter(([, n]) => n.includes('/')), [], 'the flat watch sees no deeper');

  await hFlat.stop();
  await hDeep.stop();
  await until('no watcher left in the guest', async () => (await watchersInGuest()).length === 0);
  const seen = flat.length + deep.length;
  await sbx.commands.run('touch /tmp/watched/after-stop');
  await sleep(500);
  assert.equal(flat.length + deep.length, seen, 'nothing after stop');
});

test('files.watchDir: a missing directory, a file, a relative path, the timeout', async () => {
  await assert.rejects(sbx.files.watchDir('/tmp/no-such-dir', () => {}),
    (e) => e instanceof FileNotFoundError && /no-such-dir/.test(e.message));
  await sbx.files.write('/tmp/watched-file', 'x');
  await assert.rejects(sbx.files.watchDir('/tmp/watched-file', () => {}),
    (e) => e instanceof InvalidArgumentError);
  // relative: in the user's home, as the user
  const home = [];
  const h = await sbx.files.watchDir('notes', (e) => home.push([e.type, e.name]));
  await sbx.files.write('notes/w.txt', 'w');
  await until('the home watch\'s create', () => home.some(([t, n]) => t === 'create' && n === 'w.txt'));
  assert.match((await watchersInGuest())[0], /^\s*\d+ 1000 /, 'the watcher runs as the user');
  await h.stop();
  let ended;
  await sbx.files.watchDir('/tmp', () => {}, { timeoutMs: 1500, onExit: (e) => { ended = e ?? 'no error'; } });
  await until('the watch ends at its timeout', () => ended !== undefined, 10_000);
  assert.ok(ended instanceof Error, String(ended));
  await until('no watcher left in the guest', async () => (await watchersInGuest()).length === 0);
});

test('filesystem watchers, polled (CreateWatcher, GetWatcherEvents, RemoveWatcher) and WatchDir raw', async () => {
  const headers = { 'E2b-Sandbox-Id': sbx.sandboxId, 'X-Access-Token': sbx.envdAccessToken };
  const call = async (method, body) => {
    const res = await fetch(`${g.base}/filesystem.Filesystem/${method}`, { method: 'POST',
      headers: { ...headers, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, body: await res.json() };
  };
  await sbx.files.makeDir('/tmp/polled');
  let r = await call('CreateWatcher', { path: '/tmp/polled', recursive: false });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const id = r.body.watcherId;
  assert.match(id, /^w\d+$/);
  await sbx.commands.run('printf x > /tmp/polled/p.txt');
  const events = [];
  await until('the polled events', async () => {
    r = await call('GetWatcherEvents', { watcherId: id });
    assert.equal(r.status, 200);
    events.push(...(r.body.events ?? []));
    return events.length >= 2;
  });
  assert.deepEqual(events, [{ name: 'p.txt', type: 'EVENT_TYPE_CREATE' }, { name: 'p.txt', type: 'EVENT_TYPE_WRITE' }]);
  r = await call('GetWatcherEvents', { watcherId: id });
  assert.deepEqual(r.body.events ?? [], [], 'each event is given once');
  r = await call('RemoveWatcher', { watcherId: id });
  assert.equal(r.status, 200);
  assert.deepEqual(r.body, {});
  for (const method of ['GetWatcherEvents', 'RemoveWatcher']) {
    r = await call(method, { watcherId: id });
    assert.equal(r.status, 404);
    assert.equal(r.body.code, 'not_found');
  }
  r = await call('CreateWatcher', { path: '/tmp/none-here' });
  assert.equal(r.status, 404);
  assert.equal(r.body.code, 'not_found');
  r = await call('CreateWatcher', { path: 42 });
  assert.equal(r.status, 400);
  assert.equal(r.body.code, 'invalid_argument');
  await until('no watcher left in the guest', async () => (await watchersInGuest()).length === 0);

  // WatchDir's stream as bytes: the start, an event, then the end the
  // gateway gives at Connect-Timeout-Ms
  const msg = Buffer.from(JSON.stringify({ path: '/tmp/polled' }));
  const res = await fetch(`${g.base}/filesystem.Filesystem/WatchDir`, { method: 'POST',
    headers: { ...headers, 'Content-Type': 'application/connect+json', 'Connect-Timeout-Ms': '3000' },
    body: Buffer.concat([Buffer.from([0, 0, 0, 0, msg.length]), msg]) });
  assert.equal(res.status, 200);
  const reader = res.body.getReader();
  let buf = Buffer.alloc(0);
  const frames = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf = Buffer.concat([buf, value]);
    while (buf.length >= 5 && buf.length >= 5 + buf.readUInt32BE(1)) {
      const n = buf.readUInt32BE(1);
      frames.push([buf[0], JSON.parse(buf.subarray(5, 5 + n).toString())]);
      buf = buf.subarray(5 + n);
      if (frames.length === 1) await sbx.commands.run('rm /tmp/polled/p.txt');
    }
  }
  assert.deepEqual(frames, [[0, { start: {} }], [0, { filesystem: { name: 'p.txt', type: 'EVENT_TYPE_REMOVE' } }],
    [2, { error: { code: 'deadline_exceeded', message: 'the watch reached its Connect-Timeout-Ms' } }]]);
  await until('no watcher left in the guest', async () => (await watchersInGuest()).length === 0);
});

test('Sandbox.list filters by metadata; setTimeout moves the end', async () => {
  const mine = await Sandbox.list({ query: { metadata: { run: String(process.pid) } } }).nextItems();
  assert.deepEqual(mine.map((s) => s.sandboxId), [sbx.sandboxId]);
  assert.equal(mine[0].metadata.suite, 'e2b-sdk');
  const none = await Sandbox.list({ query: { metadata: { run: 'someone-else' } } }).nextItems();
  assert.deepEqual(none, []);
  await sbx.setTimeout(30_000);
  const info = await sbx.getInfo();
  const left = info.endAt.getTime() - Date.now();
  assert.ok(left > 20_000 && left <= 31_000, `ends in ${left} ms`);
  await sbx.setTimeout(600_000);
});

test('connect never shortens a running sandbox\'s timeout; a longer one lengthens it', async () => {
  const before = await Sandbox.getInfo(sbx.sandboxId);
  await Sandbox.connect(sbx.sandboxId, { timeoutMs: 10_000 });
  const same = await sbx.getInfo();
  assert.equal(same.endAt.getTime(), before.endAt.getTime(), 'a shorter connect leaves the end');
  await sbx.connect({ timeoutMs: 900_000 });
  const later = await sbx.getInfo();
  assert.ok(later.endAt.getTime() > before.endAt.getTime() + 200_000, `moved to ${later.endAt.toISOString()}`);
  await sbx.setTimeout(600_000);
});

test('network: allowOut/denyOut become egress rules; what an allowlist cannot say is refused; list order, filters and pages', async () => {
  const native = async (path) => (await fetch(g.base + path, { headers: { Authorization: `Bearer ${g.key}` } })).json();
  await assert.rejects(Sandbox.create('tiny', { network: { denyOut: ['8.8.8.8'] }, metadata: { suite: 'e2b-sdk' } }),
    /denying some addresses while the rest stays open cannot be expressed/);
  await assert.rejects(Sandbox.create('tiny', { network: { denyOut: ({ allTraffic }) => [allTraffic], allowOut: ['10.0.0.0/8'] } }),
    /network.allowOut\[0\]: '10.0.0.0\/8': a range wider than one address/);
  const t0 = new Date();
  const extra = await Sandbox.create('tiny', {
    network: { denyOut: ({ allTraffic }) => [allTraffic], allowOut: ['1.1.1.1', 'example.com'] },
    metadata: { suite: 'e2b-sdk', extra: String(process.pid) },
  });
  try {
    assert.deepEqual((await native(`/v1/sessions/${extra.sandboxId}/egress`)).allow, ['1.1.1.1:*', 'example.com']);
    assert.deepEqual((await native(`/v1/sessions/${sbx.sandboxId}/egress`)).allow, [], 'no network option: no network');
    await Sandbox.updateNetwork(extra.sandboxId, { allowInternetAccess: true });
    assert.deepEqual((await native(`/v1/sessions/${extra.sandboxId}/egress`)).allow, ['*:*']);
    await Sandbox.updateNetwork(extra.sandboxId, { denyOut: ['0.0.0.0/0'] });
    assert.deepEqual((await native(`/v1/sessions/${extra.sandboxId}/egress`)).allow, []);
    // newest first by default, oldest first with order: 'asc'; the SDK's state array
    const ids = async (opts) => (await Sandbox.list(opts).nextItems()).map((s) => s.sandboxId);
    const suite = { suite: 'e2b-sdk' };
    assert.deepEqual(await ids({ query: { metadata: suite } }), [extra.sandboxId, sbx.sandboxId]);
    assert.deepEqual(await ids({ query: { metadata: suite }, order: 'asc' }), [sbx.sandboxId, extra.sandboxId]);
    assert.deepEqual(await ids({ query: { metadata: suite, state: ['running', 'paused'] } }), [extra.sandboxId, sbx.sandboxId]);
    assert.deepEqual(await ids({ query: { metadata: suite, state: ['paused'] } }), []);
    assert.deepEqual(await ids({ query: { metadata: suite, startedAfter: t0 } }), [extra.sandboxId]);
    assert.deepEqual(await ids({ query: { metadata: suite, template: 'tiny' } }), [extra.sandboxId, sbx.sandboxId]);
    assert.deepEqual(await ids({ query: { metadata: suite, template: 'nope' } }), []);
    // pages of one: the token is a cursor, the second page the older one, then no more
    const pages = Sandbox.list({ limit: 1, query: { metadata: suite } });
    assert.deepEqual((await pages.nextItems()).map((s) => s.sandboxId), [extra.sandboxId]);
    assert.ok(pages.hasNext && pages.nextToken);
    assert.deepEqual((await pages.nextItems()).map((s) => s.sandboxId), [sbx.sandboxId]);
    assert.equal(pages.hasNext, false);
    const bad = await fetch(g.base + '/v2/sandboxes?order=sideways', { headers: { 'X-API-KEY': g.key } });
    assert.equal(bad.status, 400);
    assert.match((await bad.json()).message, /order/);
  } finally {
    await extra.kill();
  }
});

test('getMetrics: samples with E2B\'s fields, within a time range', async () => {
  const start = new Date(Date.now() - 1000);
  const m = await sbx.getMetrics();
  assert.ok(m.length >= 1, 'a sample at once');
  const last = m[m.length - 1];
  assert.equal(last.cpuCount, (await sbx.getInfo()).cpuCount);
  assert.equal(last.memTotal, (await sbx.getInfo()).memoryMB * 1024 * 1024);
  assert.ok(last.memUsed > 0 && last.memUsed <= last.memTotal, `memUsed ${last.memUsed}`);
  assert.ok(last.cpuUsedPct >= 0 && last.cpuUsedPct <= 100);
  assert.ok(last.diskTotal >= last.diskUsed && last.diskUsed >= 0);
  assert.equal(typeof last.memCache, 'number');
  assert.ok(last.timestamp instanceof Date && !Number.isNaN(last.timestamp.getTime()));
  await until('a sample in the range', async () =>
    (await sbx.getMetrics({ start, end: new Date(Date.now() + 1000) })).length > 0, 15_000);
  const old = await sbx.getMetrics({ start: new Date(Date.now() - 3600_000), end: new Date(Date.now() - 1800_000) });
  assert.deepEqual(old, []);
});

test('fork: two forks made in turn, each with its source\'s files, metadata and envVars, apart from it; refusals', async () => {
  await sbx.files.write('/tmp/state.txt', 'before fork');
  const forks = await sbx.fork({ count: 2, timeoutMs: 120_000 });
  assert.equal(forks.length, 2);
  try {
    for (const f of forks) assert.ok(f instanceof Sandbox, String(f));
    assert.equal(new Set([sbx.sandboxId, ...forks.map((f) => f.sandboxId)]).size, 3);
    const [f] = forks;
    assert.equal(await f.files.read('/tmp/state.txt'), 'before fork');
    await f.files.write('/tmp/state.txt', 'in the fork');
    assert.equal(await sbx.files.read('/tmp/state.txt'), 'before fork');
    assert.equal(await forks[1].files.read('/tmp/state.txt'), 'before fork');
    assert.equal((await f.commands.run('echo $SANDBOX_VAR')).stdout, 'from-create\n');
    const info = await f.getInfo();
    assert.equal(info.metadata.suite, 'e2b-sdk');
    const left = info.endAt.getTime() - Date.now();
    assert.ok(left > 60_000 && left <= 121_000, `the fork ends in ${left} ms`);
    assert.equal(await sbx.isRunning(), true);
  } finally {
    await Promise.all(forks.filter((f) => f instanceof Sandbox).map((f) => f.kill()));
  }
  await assert.rejects(Sandbox.fork('nosuchsandbox'), (e) => e.name === 'SandboxNotFoundError');
  await assert.rejects(Sandbox.fork(sbx.sandboxId, { count: 0 }), /400: count must be a whole number/);
});

test('snapshots: createSnapshot makes a template a new sandbox starts from; listSnapshots; deleteSnapshot', async () => {
  await sbx.files.write('/tmp/snap.txt', 'in the snapshot');
  const snap = await sbx.createSnapshot();
  assert.match(snap.snapshotId, /^snap-/);
  assert.deepEqual(snap.names, [snap.snapshotId]);
  try {
    await sbx.files.write('/tmp/snap.txt', 'after the snapshot');
    const listed = await Sandbox.listSnapshots({ sandboxId: sbx.sandboxId }).nextItems();
    assert.deepEqual(listed.map((s) => s.snapshotId), [snap.snapshotId]);
    const from = await Sandbox.create(snap.snapshotId, { metadata: { suite: 'e2b-snapshot' } });
    try {
      assert.equal(await from.files.read('/tmp/snap.txt'), 'in the snapshot');
      assert.equal((await from.getInfo()).templateId, snap.snapshotId);
    } finally {
      await from.kill();
    }
    await assert.rejects(sbx.createSnapshot({ name: 'Not A Name' }), /400: a snapshot's name is a template's/);
  } finally {
    assert.equal(await Sandbox.deleteSnapshot(snap.snapshotId), true);
  }
  assert.equal(await Sandbox.deleteSnapshot(snap.snapshotId), false);
  assert.deepEqual(await Sandbox.listSnapshots({ sandboxId: sbx.sandboxId }).nextItems(), []);
  assert.equal(await sbx.files.read('/tmp/snap.txt'), 'after the snapshot', 'the sandbox runs on');
});

test('raw Connect: malformed frames, oversize frames, unknown methods', async () => {
  const headers = { 'E2b-Sandbox-Id': sbx.sandboxId, 'X-Access-Token': sbx.envdAccessToken,
    'Content-Type': 'application/connect+json' };
  const post = (path, body) => fetch(g.base + path, { method: 'POST', headers, body });
  const endOf = async (res) => {
    const buf = Buffer.from(await res.arrayBuffer());
    assert.equal(buf[0], 2, 'an end-of-stream frame');
    assert.equal(buf.readUInt32BE(1), buf.length - 5);
    return JSON.parse(buf.subarray(5).toString());
  };
  let res = await post('/process.Process/Start', Buffer.from([0, 0, 0]));
  assert.equal((await endOf(res)).error.code, 'invalid_argument');
  const huge = Buffer.alloc(5); huge.writeUInt32BE(0x7fffffff, 1);
  res = await post('/process.Process/Start', huge);
  assert.equal((await endOf(res)).error.code, 'invalid_argument');
  const msg = Buffer.from('{"process":{"cmd":42}}');
  const frame = Buffer.concat([Buffer.from([0, 0, 0, 0, msg.length]), msg]);
  res = await post('/process.Process/Start', frame);
  assert.equal((await endOf(res)).error.code, 'invalid_argument');
  res = await fetch(g.base + '/process.Process/Nope', { method: 'POST',
    headers: { ...headers, 'Content-Type': 'application/json' }, body: '{}' });
  assert.equal(res.status, 501);
  assert.equal((await res.json()).code, 'unimplemented');
  res = await fetch(g.base + '/process.Process/List', { method: 'POST',
    headers: { ...headers, 'Content-Type': 'application/json', 'X-Access-Token': 'wrong' }, body: '{}' });
  assert.equal(res.status, 401);
});

test('pause, then connect resumes (a watch lives through a pause in memory)', async () => {
  let ended;
  const seen = [];
  const h = await sbx.files.watchDir('/tmp', (e) => seen.push([e.type, e.name]),
    { timeoutMs: 0, onExit: (e) => { ended = e ?? 'no error'; } });
  const running = await sbx.commands.run('sleep 600', { background: true });
  assert.equal(await sbx.isRunning(), true);
  await sbx.pause();
  // A paused sandbox is not running through every envd door, as E2B's
  // proxy answers for it (502).
  assert.equal(await sbx.isRunning(), false);
  await assert.rejects(running.wait(), (e) => e instanceof TimeoutError &&
    /terminated: The sandbox was killed or reached its end of life/.test(e.message), 'its command ends as E2B\'s does');
  await assert.rejects(sbx.commands.run('true'), (e) => e.name === 'SandboxNotFoundError', 'Start');
  await assert.rejects(sbx.files.read('/tmp/x'), (e) => e instanceof TimeoutError, '/files');
  await assert.rejects(sbx.files.list('/tmp'), (e) => e instanceof TimeoutError, 'ListDir');
  const raw = await fetch(g.base + '/health', { headers: { 'E2b-Sandbox-Id': sbx.sandboxId } });
  assert.equal(raw.status, 502);
  assert.deepEqual(await raw.json(), { sandboxId: sbx.sandboxId, message: 'The sandbox is paused', code: 502 });
  const listed = await Sandbox.list({ query: { metadata: { run: String(process.pid) }, state: ['paused'] } }).nextItems();
  assert.equal(listed[0]?.state, 'paused');
  const again = await Sandbox.connect(sbx.sandboxId);
  assert.equal(await again.isRunning(), true, 'connect resumed it');
  assert.equal(await sbx.isRunning(), true);
  // A pause in memory keeps the process, as E2B's pause does: attach again.
  const back = await again.commands.connect(running.pid);
  assert.equal(await back.kill(), true);
  const r = await again.commands.run('echo back');
  assert.equal(r.stdout, 'back\n');
  await again.commands.run('mkdir /tmp/after-resume');
  await until('the watch\'s event after the resume', () => seen.length > 0);
  assert.deepEqual(seen, [['create', 'after-resume']]);
  assert.equal(ended, undefined);
  await h.stop();
});

test('autoPause: at its timeout a sandbox pauses, and connect brings it back', async () => {
  const t0 = Date.now();
  const ap = await Sandbox.create('tiny', { timeoutMs: 5000, lifecycle: { onTimeout: 'pause' },
    metadata: { run: 'ap-' + process.pid } });
  assert.equal((await ap.getInfo()).state, 'running');
  let ended;
  await ap.files.watchDir('/tmp', () => {}, { timeoutMs: 0, onExit: (e) => { ended = e ?? 'no error'; } });
  let state = 'running';
  while (state !== 'paused' && Date.now() - t0 < 60_000) {
    await new Promise((r) => setTimeout(r, 250));
    state = (await Sandbox.getInfo(ap.sandboxId)).state;
  }
  assert.equal(state, 'paused');
  assert.ok(Date.now() - t0 >= 4000, 'not before its timeout');
  await until('a watch ends when its sandbox pauses to disk', () => ended !== undefined);
  assert.ok(ended instanceof Error, String(ended));
  const back = await Sandbox.connect(ap.sandboxId, { timeoutMs: 60_000 });
  assert.equal((await back.commands.run('echo resumed')).stdout, 'resumed\n');
  await back.kill();
});

test('the older SDK (2.45) creates through the v1 path, runs, and kills', async () => {
  const old = await Sandbox245.create('tiny', { metadata: { run: 'old-' + process.pid } });
  const r = await old.commands.run('echo old sdk');
  assert.equal(r.stdout, 'old sdk\n');
  await old.kill();
  const left = await Sandbox.list({ query: { metadata: { run: 'old-' + process.pid } } }).nextItems();
  assert.deepEqual(left, []);
});

test('a gateway killed and started again keeps the sandbox: metadata, envVars, template; connect gets an envd token', async () => {
  const id = sbx.sandboxId;
  // Its agent link comes up 3 s late, after the adoption has ended:
  // connect answers once commands would run.
  g = await restartGateway(g, { VITRINE_TEST_AGENT_LATE_MS: '3000' });
  process.env.E2B_API_URL = g.base;
  process.env.E2B_SANDBOX_URL = g.base;
  const adopted = await fetch(`${g.base}/v1/sessions/${id}?wait=ready`,
    { headers: { Authorization: 'Bearer ' + g.key } });
  assert.equal(adopted.status, 200);
  assert.equal((await adopted.json()).busy, undefined, 'adopted');
  const mine = await Sandbox.list({ query: { metadata: { run: String(process.pid) } } }).nextItems();
  assert.deepEqual(mine.map((s) => s.sandboxId), [id]);
  assert.equal(mine[0].metadata.suite, 'e2b-sdk');
  assert.equal(mine[0].templateId, 'tiny');
  // The old gateway's control token is only a hash now: connect mints one.
  sbx = await Sandbox.connect(id);
  assert.match(sbx.envdAccessToken ?? '', /^[A-Za-z0-9_-]{43}$/);
  const r = await sbx.commands.run('echo $SANDBOX_VAR');
  assert.equal(r.stdout, 'from-create\n');
  const again = await Sandbox.connect(id);
  assert.equal(again.envdAccessToken, sbx.envdAccessToken, 'one token per gateway');
});

test('right after a restart, a command and a watch wait for the agent link (no connect first)', async () => {
  const id = sbx.sandboxId;
  g = await restartGateway(g, { VITRINE_TEST_AGENT_LATE_MS: '3000' });
  process.env.E2B_API_URL = g.base;
  process.env.E2B_SANDBOX_URL = g.base;
  // The sandbox as the SDK knows it, pointed at the new gateway: no API call.
  const same = new Sandbox({ sandboxId: id, envdAccessToken: sbx.envdAccessToken,
    envdVersion: '0.5.7' });
  sbx = same;
  const t0 = Date.now();
  const r = await same.commands.run('echo late link');
  assert.equal(r.stdout, 'late link\n');
  const w = await same.files.watchDir('/tmp', () => {}, { timeoutMs: 0 });
  await w.stop();
  assert.ok(Date.now() - t0 < 15_000, 'within the wait for the link');
});

test('kill; the audit log has what the SDK did', async () => {
  let ended;
  await sbx.files.watchDir('/tmp', () => {}, { timeoutMs: 0, onExit: (e) => { ended = e ?? 'no error'; } });
  const polled = await fetch(`${g.base}/filesystem.Filesystem/CreateWatcher`, { method: 'POST',
    headers: { 'E2b-Sandbox-Id': sbx.sandboxId, 'X-Access-Token': sbx.envdAccessToken,
      'Content-Type': 'application/json' }, body: JSON.stringify({ path: '/tmp' }) });
  assert.equal(polled.status, 200, 'a polled watcher goes with its sandbox too');
  const running = await sbx.commands.run('sleep 600', { background: true });
  await sbx.kill();
  // A command's stream ends as E2B's does when its sandbox is killed (not
  // "agent link closed").
  await assert.rejects(running.wait(), (e) => e instanceof TimeoutError &&
    e.message === '[unknown] terminated: The sandbox was killed or reached its end of life while the request was in flight.');
  assert.equal(await sbx.isRunning(), false);
  await until('a watch ends with its sandbox', () => ended !== undefined);
  const left = await Sandbox.list({ query: { metadata: { run: String(process.pid) } } }).nextItems();
  assert.deepEqual(left, []);
  const mine = readFileSync(auditLog, 'utf8').trim().split('\n').map((l) => JSON.parse(l))
    .filter((e) => e.session === sbx.sandboxId);
  const events = new Set(mine.map((e) => e.event));
  for (const ev of ['session_create', 'command', 'file_put', 'file_get', 'session_pause', 'session_resume', 'session_delete'])
    assert.ok(events.has(ev), `${ev} in the audit log`);
  const cmd = mine.find((e) => e.event === 'command' && e.argv.at(-1) === 'pwd');
  assert.deepEqual(cmd.argv, ['/bin/bash', '-l', '-c', 'pwd']);
  assert.equal(cmd.principal.kind, 'control');
});
