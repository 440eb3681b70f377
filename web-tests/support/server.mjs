// Starts the real `ensemble` binary on 127.0.0.1:0 in a fresh temporary directory (data dir, workspace
// root and default cwd, and a random bearer token in a 0600 token file), waits for its
// `listening on http://ADDR` and `console: …` lines and stops it again (SIGTERM, then SIGKILL after a
// grace period).
// Never leaves the server behind: a process-exit hook SIGKILLs any server still running; on Linux the
// server is exec'd through util-linux `setpriv --pdeathsig KILL`, so even a SIGKILLed test process
// takes its server with it; and a test file whose runner died (orphaned) exits on its own.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
        rmSync(srv.root, { recursive: true, force: true });
      } catch {}
    }
  });
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.once(sig, () => process.exit(128 + ({ SIGINT: 2, SIGTERM: 15, SIGHUP: 1 })[sig]));
  }
}

/** A fresh random token: 32 random bytes, hex (64 characters; the server wants at least 32). */
export function randomToken() {
  return randomBytes(32).toString('hex');
}

/**
 * @param {{startTimeoutMs?: number, graceMs?: number, extraArgs?: string[], trustedOrigins?: string[],
 *   allowedHosts?: string[], tokenFile?: boolean}} [opts]
 *   `tokenFile` (default true): write a random token to a 0600 file and pass `--token-file`; false: let
 *   the server generate one into its data dir (it is then read from the `console:` line).
 * @returns {Promise<{baseUrl: string, wsBase: string, addr: string, port: number, token: string,
 *   consoleUrl: string, root: string, dataDir: string, workspace: string, pid: number, logs: () => string,
 *   stdout: () => string, stop: () => Promise<{code: number|null, signal: string|null}>}>}
 */
export async function startServer(opts = {}) {
  const {
    startTimeoutMs = 15_000,
    graceMs = 5_000,
    extraArgs = [],
    trustedOrigins = [],
    allowedHosts = [],
    tokenFile = true,
  } = opts;
  if (!existsSync(ENSEMBLE_BIN)) {
    throw new Error(
      `ensemble binary not found at ${ENSEMBLE_BIN}; build it with \`cargo build -p ensemble-server\` ` +
        'or point ENSEMBLE_BIN at it',
    );
  }
  installHooks();
  // One temporary root per server: removed as a whole at stop (and by the exit hook).
  const root = mkdtempSync(join(tmpdir(), 'ensemble-web-tests-'));
  const dataDir = join(root, 'data');
  const workspace = join(root, 'workspace');
  mkdirSync(dataDir, { mode: 0o700 });
  mkdirSync(workspace);
  // Every test's pages use the one harness token, and the suite's rooms add up past the per-token
  // socket cap a person's browser needs.
  const baseArgs = ['--data-dir', dataDir, '--workspace-roots', workspace, '--default-cwd', workspace, '--max-ws-per-token', '4096'];
  let token = null;
  if (tokenFile) {
    token = randomToken();
    const path = join(root, 'token');
    writeFileSync(path, `${token}\n`, { mode: 0o600 });
    baseArgs.push('--token-file', path);
  }
  if (trustedOrigins.length) baseArgs.push('--trusted-origins', trustedOrigins.join(','));
  if (allowedHosts.length) baseArgs.push('--allowed-hosts', allowedHosts.join(','));
  baseArgs.push(...extraArgs);

  let out = '';
  let err = '';
  const logs = () => `--- stdout ---\n${out}\n--- stderr (tail) ---\n${err}`;
  const entry = { child: null, root };
  running.add(entry);

  /** Spawns the server on `listen` and waits for its two lines: [child, exited, addr, consoleUrl]. */
  const launch = async (listen) => {
    out = '';
    const argv = [ENSEMBLE_BIN, 'serve', '--listen', listen, ...baseArgs];
    const usePdeathsig = process.platform === 'linux' && existsSync(SETPRIV);
    const [cmd, ...args] = usePdeathsig ? [SETPRIV, '--pdeathsig', 'KILL', '--', ...argv] : argv;
    const child = spawn(cmd, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, RUST_LOG: process.env.RUST_LOG || 'info', NO_COLOR: '1' },
    });
    entry.child = child;
    const exited = new Promise((resolveExit) => {
      child.once('exit', (code, signal) => resolveExit({ code, signal }));
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d) => {
      // Keep the last ~64 KiB for failure messages.
      err = (err + d).slice(-65_536);
    });
    child.stdout.setEncoding('utf8');
    // The server prints `listening on http://ADDR`, then `console: http://ADDR/[#token=T]…`.
    try {
      const [addr, consoleUrl] = await new Promise((resolveAddr, rejectAddr) => {
        const timer = setTimeout(
          () =>
            rejectAddr(
              new Error(`ensemble did not print "listening on" and "console:" within ${startTimeoutMs} ms\n${logs()}`),
            ),
          startTimeoutMs,
        );
        child.stdout.on('data', (d) => {
          out += d;
          const m = /^listening on http:\/\/(\S+)\s*$/m.exec(out);
          const c = /^console: (http:\/\/\S+)/m.exec(out);
          if (m && c) {
            clearTimeout(timer);
            resolveAddr([m[1], c[1]]);
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
      if (!/^127\.0\.0\.1:\d+$/.test(addr)) throw new Error(`server listens on ${addr}, expected 127.0.0.1:PORT`);
      return { child, exited, addr, consoleUrl };
    } catch (e) {
      child.kill('SIGKILL');
      await exited;
      throw e;
    }
  };

  /** SIGTERM, then SIGKILL after the grace period; resolves to how it exited. */
  const terminate = async ({ child, exited }) => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const res = await exited;
      clearTimeout(timer);
      return res;
    }
    return exited;
  };

  let current;
  try {
    current = await launch('127.0.0.1:0');
  } catch (e) {
    running.delete(entry);
    rmSync(root, { recursive: true, force: true });
    throw e;
  }
  const { addr, consoleUrl } = current;
  if (token === null) {
    // Generated by the server: it is only in the console URL's fragment.
    token = new URL(consoleUrl).hash.match(/^#token=([^&\s]+)/)?.[1] ?? null;
    if (!token) {
      await terminate(current);
      running.delete(entry);
      rmSync(root, { recursive: true, force: true });
      throw new Error(`no token in the console line ${consoleUrl}\n${logs()}`);
    }
  }

  let stopping;
  const stop = () => {
    stopping ??= (async () => {
      const res = await terminate(current);
      running.delete(entry);
      rmSync(root, { recursive: true, force: true });
      return res;
    })();
    return stopping;
  };

  /**
   * Stops the server (SIGTERM: a graceful shutdown, or `{kill: true}`: SIGKILL) and starts it again on
   * the same address with the same data dir and token. Resolves to how the first one exited.
   */
  const restart = async ({ kill = false } = {}) => {
    if (stopping) throw new Error('restart after stop');
    let res;
    if (kill) {
      current.child.kill('SIGKILL');
      res = await current.exited;
    } else {
      res = await terminate(current);
    }
    current = await launch(addr);
    return res;
  };

  return {
    addr,
    port: Number(addr.split(':')[1]),
    baseUrl: `http://${addr}`,
    wsBase: `ws://${addr}`,
    token,
    consoleUrl,
    root,
    dataDir,
    workspace,
    get pid() {
      return current.child.pid;
    },
    logs,
    stdout: () => out,
    stop,
    restart,
  };
}
