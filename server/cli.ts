#!/usr/bin/env node
import { runCli } from './cli/run.js';
import { readHiddenLine } from './cli/hidden-input.js';

function readStdin(): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    process.stdin.on('data', (c: Buffer) => chunks.push(c));
    process.stdin.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    process.stdin.on('error', reject);
  });
}

const code = await runCli(process.argv.slice(2), {
  stdout: (t) => process.stdout.write(t),
  stderr: (t) => process.stderr.write(t),
  readStdin,
  // A password typed at a terminal is not echoed; piped in, it is read whole.
  readHiddenLine: process.stdin.isTTY ? (prompt) => readHiddenLine(process.stdin, (t) => process.stderr.write(t), prompt) : undefined,
  env: process.env,
});
process.exitCode = code;
