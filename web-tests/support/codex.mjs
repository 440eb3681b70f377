// The real codex for browser tests: the binary `scripts/test` installs into .tools/codex (or
// $ENSEMBLE_CODEX_BIN), the mock Responses API (`target/debug/mock-model`, keyword rules: SHELL,
// ASKUSER, …) on 127.0.0.1, and the server flags that point codex at it — as the Rust tests do
// (server/tests/it/common). Without `key` codex has no API key: its sessions are `auth_required`.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ENSEMBLE_BIN } from './server.mjs';

const here = dirname(fileURLToPath(import.meta.url));
export const CODEX_BIN = resolve(
  process.env.ENSEMBLE_CODEX_BIN || join(here, '../../.tools/codex/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex'),
);
export const MOCK_MODEL_BIN = join(dirname(ENSEMBLE_BIN), 'mock-model');
export const MOCK_KEY = 'web-test-key-123';

/**
 * Flags for `ensemble serve` that run codex against the model API at `baseUrl` (its `/v1`), with a
 * CODEX_HOME of its own under /var/tmp (codex warns about homes under /tmp). `cleanup()` removes it.
 */
export function codexArgs({ baseUrl = 'http://127.0.0.1:9', key = null } = {}) {
  const home = mkdtempSync('/var/tmp/ensemble-web-codex-home-');
  const p = 'model_providers.mock';
  const config = [
    'model_provider="mock"',
    'model="mock-model"',
    `${p}.name="Ensemble mock model"`,
    `${p}.base_url="${baseUrl}/v1"`,
    `${p}.wire_api="responses"`,
    `${p}.supports_websockets=false`,
    `${p}.request_max_retries=0`,
    `${p}.stream_max_retries=0`,
    `${p}.env_key="MOCK_API_KEY"`,
    'features.plugins=false',
    'analytics.enabled=false',
  ];
  const args = ['--codex-bin', CODEX_BIN, '--codex-home', home, ...config.flatMap((c) => ['--codex-config', c])];
  if (key) args.push('--codex-env', `MOCK_API_KEY=${key}`);
  // codex's `bash -l` would read the machine's dotfiles with the real HOME.
  args.push('--codex-env', `HOME=${home}`);
  // codex runs in its box: the mock model is the one endpoint it may reach.
  args.push('--isolation-network', new URL(baseUrl).host);
  return { args, home, cleanup: () => rmSync(home, { recursive: true, force: true }) };
}

/** Starts the mock model API (`mock-model --api-key KEY`); resolves to `{baseUrl, stop()}`. */
export async function startMockModel({ key = MOCK_KEY } = {}) {
  if (!existsSync(MOCK_MODEL_BIN)) throw new Error(`the mock model is missing at ${MOCK_MODEL_BIN}: run cargo build -p ensemble-mock-model`);
  const usePdeathsig = process.platform === 'linux' && existsSync('/usr/bin/setpriv');
  const argv = [MOCK_MODEL_BIN, '--api-key', key];
  const [cmd, ...args] = usePdeathsig ? ['/usr/bin/setpriv', '--pdeathsig', 'KILL', '--', ...argv] : argv;
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const kill = () => {
    try {
      child.kill('SIGKILL');
    } catch {}
  };
  process.on('exit', kill);
  let out = '';
  const baseUrl = await new Promise((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`mock-model did not start: ${out}`)), 15_000);
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolveUrl(m[1]);
      }
    });
    child.stderr.on('data', () => {});
    child.once('exit', (code) => reject(new Error(`mock-model exited (${code}): ${out}`)));
  });
  return {
    baseUrl,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGINT');
      const t = setTimeout(kill, 5_000);
      await gone;
      clearTimeout(t);
    },
  };
}
