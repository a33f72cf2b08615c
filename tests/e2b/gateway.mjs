// tests/e2b/gateway.mjs: the `vitrine serve` child of the browser tests
// (tests/web/gateway.mjs) for the E2B SDK tests, with an operator key shaped
// as E2B's keys are (`e2b_` + hex): SDKs 2.27-2.4x refuse any other before
// sending; and the check that no QEMU outlived it.
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { startGateway as start, stopGateway } from '../web/gateway.mjs';

export { stopGateway };

export function startGateway(name, args = []) {
  return start(name, args, { key: 'e2b_' + randomBytes(20).toString('hex') });
}

// The pids of QEMU processes whose command line names runBase: none may be
// left once the gateway stopped.
export function qemuUnder(runBase) {
  const pids = [];
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    let cmd = '';
    try { cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8'); } catch { continue; }
    if (cmd.includes('qemu') && cmd.includes(runBase)) pids.push(Number(p));
  }
  return pids;
}
