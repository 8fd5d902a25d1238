/**
 * A password typed at a terminal, read without echo: the terminal is put in raw mode, so the keys
 * never appear, and what they mean is handled here: Enter (or Ctrl-D) ends, Backspace erases one
 * character, Ctrl-U the whole line, Ctrl-C cancels; arrow and function keys are ignored. The
 * terminal's mode is restored whatever happens.
 */

/** What is needed of process.stdin when it is a terminal. */
export interface TerminalInput {
  setRawMode(mode: boolean): unknown;
  setEncoding(encoding: BufferEncoding): unknown;
  resume(): unknown;
  pause(): unknown;
  on(event: 'data', listener: (chunk: string) => void): unknown;
  off(event: 'data', listener: (chunk: string) => void): unknown;
}

export class InputCancelled extends Error {
  override name = 'InputCancelled';
}

const ENTER = new Set(['\r', '\n', '\u0004']);
const ERASE = new Set(['\u007f', '\b']);

export function readHiddenLine(input: TerminalInput, write: (text: string) => void, prompt: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let typed: string[] = [];
    const finish = (error?: Error) => {
      input.off('data', onData);
      input.setRawMode(false);
      input.pause();
      write('\n');
      if (error) reject(error);
      else resolve(typed.join(''));
    };
    const onData = (chunk: string) => {
      // An arrow or function key arrives as one escape sequence: nothing of it is typed text.
      if (chunk.startsWith('\u001b')) return;
      for (const character of chunk) {
        if (ENTER.has(character)) return finish();
        if (character === '\u0003') return finish(new InputCancelled('cancelled at the password prompt (Ctrl-C)'));
        if (ERASE.has(character)) typed = typed.slice(0, -1);
        else if (character === '\u0015') typed = [];
        else if (character >= ' ') typed.push(character);
      }
    };
    // Raw mode before the prompt: keys typed as soon as it shows are never echoed.
    input.setEncoding('utf8');
    input.setRawMode(true);
    input.on('data', onData);
    input.resume();
    write(prompt);
  });
}
