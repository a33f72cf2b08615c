// tests/web/gateway.mjs: a `vitrine serve` child for the browser tests, on
// 127.0.0.1 with a port of its own choosing, its own key file and run base
// (VITRINE_BIN picks the build: tests/run.sh runs both).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

// With opts.key, the operator key is that one (written to the key file
// before the start), else the gateway makes one.
export async function startGateway(name, args = [], opts = {}) {
  const dir = mkdtempSync(join(tmpdir(), `vitrine-${name}-`));
  const runBase = join(tmpdir(), `vitrine-${name}-run-${process.pid}`);
  if (opts.key) writeFileSync(join(dir, 'key'), opts.key + '\n', { mode: 0o600 });
  return spawnGateway({ dir, runBase, args });
}

// Kills the gateway with SIGKILL and starts a new one on the same key,
// state dir and run base (docs/durability.md): its sessions come back.
// env: variables of the new gateway's own (test hooks).
export async function restartGateway(g, env = {}) {
  g.proc.kill('SIGKILL');
  while (g.proc.exitCode === null && g.proc.signalCode === null)
    await new Promise((r) => setTimeout(r, 50));
  return spawnGateway({ ...g, env });
}

async function spawnGateway({ dir, runBase, args, env = {} }) {
  const bin = process.env.VITRINE_BIN || 'build/vitrine';
  // Its own state dir, and its guests go with it when it stops (SIGTERM).
  const proc = spawn(bin, ['serve', '--listen', '127.0.0.1:0', '--api-key-file', join(dir, 'key'),
    '--state-dir', join(dir, 'state'), '--on-stop', 'kill', ...args], {
    // The gateway makes its run base itself (QEMU's own user must reach it).
    env: { ...process.env, VITRINE_RUN: runBase, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise((resolve, reject) => {
    const rl = createInterface({ input: proc.stdout });
    rl.once('line', resolve);
    proc.once('exit', (c) => reject(new Error('gateway exited ' + c)));
  });
  const base = line.match(/listening on (http:\/\/\S+)/)[1];
  const key = readFileSync(join(dir, 'key'), 'utf8').trim();
  return { proc, base, key, dir, runBase, args };
}

// Stops the gateway; resolves to its exit code (a sanitizer report makes it
// non-zero; a signal gives 128 + its number). Polls, so a timer keeps node's
// event loop alive until the child is reaped.
export async function stopGateway(g) {
  if (!g) return 0;
  const gw = g.proc;
  if (gw.exitCode === null && gw.signalCode === null) gw.kill('SIGTERM');
  const end = Date.now() + 60000;
  while (gw.exitCode === null && gw.signalCode === null && Date.now() < end)
    await new Promise((r) => setTimeout(r, 100));
  rmSync(g.dir, { recursive: true, force: true });
  rmSync(g.runBase, { recursive: true, force: true });
  if (gw.exitCode !== null) return gw.exitCode;
  return gw.signalCode ? 128 : -1;
}
