#!/usr/bin/env node
// The hub's PostgreSQL driver, postgres 3.4.9, can crash the process when PostgreSQL restarts:
// a small write deferred with setImmediate runs after the connection has closed and calls
// socket.write on null — an uncatchable TypeError (porsager/postgres#1154, #1208; fixes proposed
// in #1168, #1176, #1209, not released). Both teardowns also cancel that immediate without
// forgetting it, so a reconnected connection can never flush small writes again. Until a release
// fixes it, `npm ci` runs this (postinstall): it guards nextWrite (the write is dropped and the
// queries waiting on it get CONNECTION_CLOSED, which the hub answers as 503) and resets the timer
// and the buffered chunk on teardown. Idempotent; it fails loudly when the driver's code changed.
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', 'node_modules', 'postgres');
const MARKER = '/* courtier: porsager/postgres#1208 */';
const PATCHED_VERSION = '3.4.9';

const replacements = [
  [
    '  function nextWrite(fn) {\n    const x = socket.write(chunk, fn)',
    `  function nextWrite(fn) {\n    if (!socket) { ${MARKER}\n      chunk = nextWriteTimer = null\n      error(Errors.connection('CONNECTION_CLOSED', options))\n      return false\n    }\n    const x = socket.write(chunk, fn)`,
  ],
  [
    "    terminated = true\n    if (stream || query || initial || sent.length)\n      error(Errors.connection('CONNECTION_DESTROYED', options))\n\n    clearImmediate(nextWriteTimer)\n",
    "    terminated = true\n    if (stream || query || initial || sent.length)\n      error(Errors.connection('CONNECTION_DESTROYED', options))\n\n    clearImmediate(nextWriteTimer)\n    nextWriteTimer = chunk = null\n",
  ],
  [
    '    incomings = null\n    clearImmediate(nextWriteTimer)\n',
    '    incomings = null\n    clearImmediate(nextWriteTimer)\n    nextWriteTimer = chunk = null\n',
  ],
];

if (!existsSync(root)) process.exit(0); // not installed (a production install without the hub's driver)
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
for (const file of ['src/connection.js', 'cjs/src/connection.js']) {
  const path = join(root, file);
  let text = readFileSync(path, 'utf8');
  if (text.includes(MARKER)) continue;
  for (const [from, to] of replacements) {
    if (!text.includes(from)) {
      console.error(
        `patch-postgres: postgres ${version} ${file} no longer has the code this patch fixes (written for ${PATCHED_VERSION}); check whether the release fixes porsager/postgres#1208 and update or remove scripts/patch-postgres.mjs.`,
      );
      process.exit(1);
    }
    text = text.replace(from, to);
  }
  writeFileSync(path, text);
  console.log(`patch-postgres: guarded nextWrite in postgres ${version} ${file}`);
}
