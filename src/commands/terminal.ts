import type { CommandIo, Output, ProgressLine } from './command.js';

/** Back to the line's start and erase it (ECMA-48: CR, then EL 2). */
const CLEAR_LINE = '\r\u001b[2K';

/**
 * The screen a command's standard output and standard error share on a
 * terminal, with its one progress line (`sync`'s pages and records): every
 * other write through it (the command's output, its log lines) clears the
 * progress line first and draws it again after, so a line written while it
 * shows stands on a line of its own and the progress stays last. Writes are
 * synchronous, in the order made (terminals are written synchronously by
 * Node on POSIX), so nothing comes between a clear and its redraw. Only
 * outputs that are terminals (`isTTY`) share it: a file or a pipe gets its
 * text as written.
 */
export class Terminal implements ProgressLine {
  readonly #screen: Output;
  readonly #shared = new WeakSet<Output>();
  /** The progress line, cut to the width; empty: no progress to show. */
  #line = '';
  /** The progress line shows on the screen's last line. */
  #showing = false;
  /** The last write ended mid-line (a prompt): the progress goes below it. */
  #midLine = false;

  /** `screen`: where the progress line is drawn (standard output). */
  constructor(screen: Output) {
    this.#screen = screen;
  }

  /** True when a progress line can be drawn: the screen is a terminal. */
  get interactive(): boolean {
    return this.#screen.isTTY === true;
  }

  /**
   * Draws `line` as the progress line in place of the one showing, cut to
   * the terminal's width (a line that wrapped could not be erased whole).
   * Nothing when the screen is not a terminal.
   */
  progress(line: string): void {
    if (!this.interactive) return;
    const width = Math.max((this.#screen.columns ?? 80) - 1, 2);
    this.#line = line.length > width ? `${line.slice(0, width - 1)}…` : line;
    this.#draw();
  }

  /** Erases the progress line for good: what is written next starts at the line's start. */
  endProgress(): void {
    if (this.#showing) this.#screen.write(CLEAR_LINE);
    this.#line = '';
    this.#showing = false;
  }

  /**
   * `target` written through this terminal: each write clears a progress
   * line that shows, then draws it again below the text. A target that is
   * not a terminal is returned as it is, and so is one already shared.
   */
  share(target: Output): Output {
    if (target.isTTY !== true || this.#shared.has(target)) return target;
    const shared: Output = {
      isTTY: true,
      columns: target.columns,
      write: (text: string) => this.#write(target, text),
    };
    this.#shared.add(shared);
    return shared;
  }

  #write(target: Output, text: string): unknown {
    if (text === '') return target.write(text);
    if (this.#showing) {
      this.#screen.write(CLEAR_LINE);
      this.#showing = false;
    }
    const written = target.write(text);
    this.#midLine = !text.endsWith('\n');
    if (!this.#midLine && this.#line !== '') this.#draw();
    return written;
  }

  #draw(): void {
    this.#screen.write(`${this.#midLine ? '\n' : CLEAR_LINE}${this.#line}`);
    this.#midLine = false;
    this.#showing = true;
  }
}

/**
 * `io` with its standard output and standard error sharing one
 * {@link Terminal} (its `terminal`); `io` itself when they already do.
 */
export function shareTerminal(io: CommandIo): CommandIo & { terminal: ProgressLine } {
  if (io.terminal) return { ...io, terminal: io.terminal };
  const terminal = new Terminal(io.stdout);
  return {
    ...io,
    stdout: terminal.share(io.stdout),
    stderr: terminal.share(io.stderr),
    terminal,
  };
}
