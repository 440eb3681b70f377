// Builds the console into server/src/console/ (index.html, app.js, app.css, icon.svg), which the server embeds
// with include_bytes!, so `cargo build` needs no Node. Deterministic: the same sources and pinned
// esbuild give the same bytes.
//
//   node build.mjs            type-check (tsc), then write the bundle
//   node build.mjs --check    type-check, build in memory, fail if the committed bundle differs
//   node build.mjs --tests    bundle test/*.test.ts into .test-build/ for `node --test`
import { readFileSync, writeFileSync, mkdirSync, readdirSync, rmSync, existsSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import * as esbuild from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, '..', 'server', 'src', 'console');
const mode = process.argv[2] ?? 'build';

// The client's src/ imports openapi-fetch: take it from this package's node_modules (pinned here),
// whatever else is installed next to the client.
const pinnedDeps = {
  name: 'pinned-deps',
  setup(build) {
    build.onResolve({ filter: /^openapi-fetch$/ }, (args) =>
      args.pluginData === 'pinned' ? undefined : build.resolve(args.path, { kind: args.kind, resolveDir: here, pluginData: 'pinned' }),
    );
  },
};

const common = {
  absWorkingDir: here,
  bundle: true,
  target: ['es2022', 'chrome110', 'firefox110', 'safari16'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  charset: 'utf8',
  logLevel: 'warning',
  plugins: [pinnedDeps],
};

function typecheck() {
  try {
    execFileSync(process.execPath, [join(here, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(here, 'tsconfig.json')], { stdio: 'inherit' });
  } catch {
    console.error('error: the console does not type-check (tsc)');
    process.exit(1);
  }
}

async function bundle() {
  const js = await esbuild.build({ ...common, entryPoints: ['src/main.tsx'], format: 'iife', minify: true, legalComments: 'eof', write: false, outfile: 'app.js' });
  const css = await esbuild.build({ ...common, entryPoints: ['src/styles.css'], minify: true, write: false, outfile: 'app.css' });
  return {
    'index.html': readFileSync(join(here, 'src', 'index.html')),
    'app.js': Buffer.from(js.outputFiles[0].contents),
    'app.css': Buffer.from(css.outputFiles[0].contents),
    'icon.svg': readFileSync(join(here, 'src', 'icon.svg')),
  };
}

if (mode === '--tests') {
  const dir = join(here, '.test-build');
  rmSync(dir, { recursive: true, force: true });
  const tests = readdirSync(join(here, 'test')).filter((f) => f.endsWith('.test.ts') || f.endsWith('.test.tsx'));
  await esbuild.build({
    ...common,
    entryPoints: tests.map((f) => `test/${f}`),
    platform: 'node',
    target: 'node20',
    format: 'esm',
    outdir: '.test-build',
    outExtension: { '.js': '.mjs' },
    packages: 'external',
    plugins: [],
  });
} else if (mode === '--check') {
  typecheck();
  const files = await bundle();
  const stale = Object.entries(files).filter(([name, bytes]) => {
    const path = join(out, name);
    return !existsSync(path) || !readFileSync(path).equals(bytes);
  });
  if (stale.length) {
    console.error(`error: the committed console bundle is stale (${stale.map(([n]) => relative(process.cwd(), join(out, n))).join(', ')}): run scripts/build-console`);
    process.exit(1);
  }
  console.log(`console bundle up to date (${Object.entries(files).map(([n, b]) => `${n} ${b.length} B`).join(', ')})`);
} else if (mode === 'build') {
  typecheck();
  const files = await bundle();
  mkdirSync(out, { recursive: true });
  for (const [name, bytes] of Object.entries(files)) writeFileSync(join(out, name), bytes);
  console.log(`wrote ${relative(process.cwd(), out)}: ${Object.entries(files).map(([n, b]) => `${n} ${b.length} B`).join(', ')}`);
} else {
  console.error(`usage: node build.mjs [--check | --tests]`);
  process.exit(2);
}
