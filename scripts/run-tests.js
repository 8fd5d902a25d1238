#!/usr/bin/env node
// `npm test` and `npm run test:quick`: the phases one after the other, each announced on a line of
// its own with its number and what it does, then how long it took, so that the first minutes
// (build, typecheck, lint) are not silent. The first phase that fails stops the run with its name.
//
//   node scripts/run-tests.js [--quick] [vitest arguments…]
//
// Without --quick: build, typecheck, lint, then every test. With --quick: build, then the tests
// that need neither a browser nor PostgreSQL (vitest's tags `browser` and `postgres`, see
// vitest.config.ts). Arguments after the options go to vitest (a file, -t "name"…).
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const vitestArgs = args.filter((arg) => arg !== '--quick');
// Node runs npm's and vitest's own scripts: no shell, so the tags filter needs no quoting anywhere.
const npmCli = process.env.npm_execpath;
const npm = (...script) => (npmCli ? [process.execPath, npmCli, 'run', '-s', ...script] : ['npm', 'run', '-s', ...script]);
const vitest = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url));

const phases = [
  { name: 'build', what: 'the server (tsc) and the console (Vite, skipped when unchanged)', command: npm('build') },
  ...(quick
    ? []
    : [
        { name: 'typecheck', what: 'TypeScript over the server, the console, the desktop app and the tests', command: npm('typecheck') },
        { name: 'lint', what: 'ESLint, then knip (unused exports, import cycles)', command: npm('lint') },
      ]),
  {
    name: 'tests',
    what: quick
      ? 'unit, integration, security and desktop tests, without a browser or PostgreSQL'
      : 'every test: unit, integration, security, desktop, hub, sync and browser',
    command: [process.execPath, vitest, 'run', ...(quick ? ['--tags-filter', '!browser && !postgres'] : []), ...vitestArgs],
  },
];

const seconds = (ms) => `${Math.round(ms / 1000)} s`;
const started = Date.now();
for (const [index, phase] of phases.entries()) {
  const step = `[${index + 1}/${phases.length}] ${phase.name}`;
  console.log(`\n▶ ${step}: ${phase.what}…`);
  const phaseStarted = Date.now();
  const [command, ...rest] = phase.command;
  const run = spawnSync(command, rest, { stdio: 'inherit' });
  const took = seconds(Date.now() - phaseStarted);
  if (run.status !== 0) {
    const why = run.error ? run.error.message : run.signal ? `stopped by ${run.signal}` : `exit code ${run.status}`;
    console.error(`\n✗ ${step} failed after ${took} (${why}); the run stops here.`);
    process.exit(run.status || 1);
  }
  console.log(`✓ ${step} done in ${took}`);
}
console.log(`\n✓ all ${phases.length} phases passed in ${seconds(Date.now() - started)}`);
