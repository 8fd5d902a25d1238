#!/usr/bin/env node
// Builds the console (Vite, into dist/renderer/) unless it was built from exactly the current
// inputs: `npm start` runs the build every time, and Vite takes most of its time.
//
// The inputs are everything the bundle is made of: renderer/ (pages, index.html, the Vite config),
// shared/ (the contract it imports) and package-lock.json (the versions of React, Vite…). Their
// contents are hashed, paths included, so an edit, a new file, a deletion or a rename all rebuild,
// whatever the files' mtimes say. The hash of the last build is kept in dist/, beside (not inside)
// the served folder; a missing dist/renderer/index.html rebuilds too. --force always builds.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const INPUTS = ['renderer', 'shared', 'package-lock.json'];
const OUTPUT = join(root, 'dist', 'renderer', 'index.html');
const STAMP = join(root, 'dist', '.console-inputs.sha256');

/** Every file under path (path itself if it is a file; nothing if it is missing). */
function filesUnder(path) {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path).flatMap((name) => filesUnder(join(path, name)));
}

function inputsHash() {
  const hash = createHash('sha256');
  const files = INPUTS.flatMap((input) => filesUnder(join(root, input))).map((file) => relative(root, file).split('\\').join('/'));
  for (const file of files.sort()) {
    const content = readFileSync(join(root, file));
    hash.update(`${file}\0${content.length}\0`).update(content);
  }
  return hash.digest('hex');
}

const current = inputsHash();
const upToDate = !process.argv.includes('--force') && existsSync(OUTPUT) && existsSync(STAMP) && readFileSync(STAMP, 'utf8') === current;
if (!upToDate) {
  // Removed first: a build that fails half-way must not leave the previous stamp beside a broken output.
  rmSync(STAMP, { force: true });
  const { build } = await import('vite');
  await build({ configFile: join(root, 'renderer', 'vite.config.ts'), logLevel: 'warn' });
  mkdirSync(dirname(STAMP), { recursive: true });
  writeFileSync(STAMP, current);
}
