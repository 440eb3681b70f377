// Starts the real `ensemble` binary on 127.0.0.1:0 with a fresh temporary data dir, waits for its
// `listening on http://ADDR` line and stops it again (SIGTERM, then SIGKILL after a grace period).
// Never leaves the server behind: a process-exit hook SIGKILLs any server still running; on Linux the
// server is exec'd through util-linux `setpriv --pdeathsig KILL`, so even a SIGKILLed test process
// takes its server with it; and a test file whose runner died (orphaned) exits on its own.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const webTestsDir = resolve(here, '..');

/** Path of the server binary: $ENSEMBLE_BIN (relative paths are taken from web-tests/), else ../target/debug/ensemble. */
export const ENSEMBLE_BIN = resolve(webTestsDir, process.env.ENSEMBLE_BIN || '../target/debug/ensemble');

const SETPRIV = '/usr/bin/setpriv';
const running = new Set();
let hooksInstalled = false;

function installHooks() {
  if (hooksInstalled) return;
  hooksInstalled = true;
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) {
      console.error('web-tests: test runner is gone; stopping');
      process.exit(1);
    }
  }, 500).unref();
  process.on('exit', () => {
    for (const srv of running) {
      try {
        srv.child.kill('SIGKILL');
      } catch {}
      try {
        rmSync(srv.dataDir, { recursive: true, force: true });
      } catch {}
    }
  });
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.once(sig, () => process.exit(128 + ({ SIGINT: 2, SIGTERM: 15, SIGHUP: 1 })[sig]));
  }
}

/**
 * @param {{startTimeoutMs?: number, graceMs?: number, extraArgs?: string[]}} [opts]
 * @returns {Promise<{baseUrl: string, wsBase: string, addr: string, port: number, dataDir: string,
 *   pid: number, logs: () => string, stop: () => Promise<{code: number|null, signal: string|null}>}>}
 */
export async function startServer(opts = {}) {
  const { startTimeoutMs = 15_000, graceMs = 5_000, extraArgs = [] } = opts;
  if (!existsSync(ENSEMBLE_BIN)) {
    throw new Error(
      `ensemble binary not found at ${ENSEMBLE_BIN}; build it with \`cargo build -p ensemble-server\` ` +
        'or point ENSEMBLE_BIN at it',
    );
  }
  installHooks();
  const dataDir = mkdtempSync(join(tmpdir(), 'ensemble-web-tests-'));
  const argv = [ENSEMBLE_BIN, 'serve', '--listen', '127.0.0.1:0', '--data-dir', dataDir, ...extraArgs];
  const usePdeathsig = process.platform === 'linux' && existsSync(SETPRIV);
  const [cmd, ...args] = usePdeathsig ? [SETPRIV, '--pdeathsig', 'KILL', '--', ...argv] : argv;
  const child = spawn(cmd, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, RUST_LOG: process.env.RUST_LOG || 'info', NO_COLOR: '1' },
  });
  const srv = { child, dataDir };
  running.add(srv);

  let out = '';
  let err = '';
  const exited = new Promise((resolveExit) => {
    child.once('exit', (code, signal) => {
      running.delete(srv);
      resolveExit({ code, signal });
    });
  });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d) => {
    // Keep the last ~64 KiB for failure messages.
    err = (err + d).slice(-65_536);
  });
  child.stdout.setEncoding('utf8');

  const logs = () => `--- stdout ---\n${out}\n--- stderr (tail) ---\n${err}`;

  let addr;
  try {
    addr = await new Promise((resolveAddr, rejectAddr) => {
      const timer = setTimeout(
        () => rejectAddr(new Error(`ensemble did not print "listening on" within ${startTimeoutMs} ms\n${logs()}`)),
        startTimeoutMs,
      );
      child.stdout.on('data', (d) => {
        out += d;
        const m = /^listening on http:\/\/(\S+)\s*$/m.exec(out);
        if (m) {
          clearTimeout(timer);
          resolveAddr(m[1]);
        }
      });
      child.once('error', (e) => {
        clearTimeout(timer);
        rejectAddr(e);
      });
      exited.then(({ code, signal }) => {
        clearTimeout(timer);
        rejectAddr(new Error(`ensemble exited early (code ${code}, signal ${signal})\n${logs()}`));
      });
    });
  } catch (e) {
    child.kill('SIGKILL');
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
    throw e;
  }
  if (!/^127\.0\.0\.1:\d+$/.test(addr)) {
    child.kill('SIGKILL');
    throw new Error(`server listens on ${addr}, expected 127.0.0.1:PORT`);
  }

  let stopping;
  const stop = () => {
    stopping ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        const res = await exited;
        clearTimeout(timer);
        rmSync(dataDir, { recursive: true, force: true });
        return res;
      }
      const res = await exited;
      rmSync(dataDir, { recursive: true, force: true });
      return res;
    })();
    return stopping;
  };

  return {
    addr,
    port: Number(addr.split(':')[1]),
    baseUrl: `http://${addr}`,
    wsBase: `ws://${addr}`,
    dataDir,
    pid: child.pid,
    logs,
    stop,
  };
}
