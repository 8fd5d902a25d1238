import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../server/paths.js';

const moduleUrl = pathToFileURL(join(packageRoot(), 'dist', 'server', 'platform', 'http', 'tick-shape.js')).href;

/**
 * In a process of its own, with V8's natives syntax: after holdNextTickShape(), the entry it holds
 * has the hidden class (map) of the entries nextTick makes later, with or without arguments, so
 * holding it keeps those maps alive (server/platform/http/tick-shape.ts says why that matters).
 */
const script = `
const { holdNextTickShape } = await import(${JSON.stringify(moduleUrl)});
const { createHook } = await import('node:async_hooks');
const held = Symbol.for('courtier.nextTickEntry');
holdNextTickShape();
const first = process[held];
holdNextTickShape();
const again = process[held];
for (let i = 0; i < 2000; i++) await new Promise((resolve) => (i % 2 ? process.nextTick(resolve) : process.nextTick(resolve, i, 'x')));
const fresh = [];
const hook = createHook({ init(_id, type, _trigger, resource) { if (type === 'TickObject') fresh.push(resource); } }).enable();
process.nextTick(() => undefined);
process.nextTick(() => undefined, 1, 2, 3);
hook.disable();
const sameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)');
console.log(JSON.stringify({
  held: typeof first === 'object' && first !== null && 'callback' in first && 'args' in first,
  once: first === again,
  sameMaps: fresh.map((entry) => sameMap(first, entry)),
}));
`;

describe('holdNextTickShape', () => {
  it('holds one nextTick entry per process, of the same hidden class as later entries', () => {
    const output = execFileSync(process.execPath, ['--allow-natives-syntax', '--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(JSON.parse(output.trim())).toEqual({ held: true, once: true, sameMaps: [true, true] });
  });
});
