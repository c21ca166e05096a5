/**
 * Splits a list body into the exact text of each record, as the API sent it:
 * digits beyond 2^53, `1.0` and key order survive, which no JSON.stringify of
 * a parsed value can promise. Used when Postgres refuses a page as a whole and
 * its records are written one by one. The scan is iterative, so nesting depth
 * costs no stack.
 *
 * @param recordsKey property of an object body that holds the records;
 *   undefined: the body is the array.
 * @throws Error when the body holds no such array (the caller has already
 *   parsed it, so this means a bug, not bad input).
 */
export function recordTexts(body: string, recordsKey?: string): string[] {
  const scanner = new Scanner(body);
  scanner.skipSpace();
  if (recordsKey !== undefined) {
    // JSON.parse and Postgres both take the last of repeated keys: so does this.
    let arrayAt: number | undefined;
    scanner.members((key, start) => {
      if (key === recordsKey) arrayAt = body.charAt(start) === '[' ? start : undefined;
    });
    if (arrayAt === undefined) throw new Error(`the body holds no array at ${recordsKey}`);
    scanner.pos = arrayAt;
  }
  scanner.expect('[');
  const texts: string[] = [];
  scanner.skipSpace();
  if (scanner.peek() === ']') return texts;
  for (;;) {
    scanner.skipSpace();
    const start = scanner.pos;
    scanner.skipValue();
    texts.push(body.slice(start, scanner.pos));
    scanner.skipSpace();
    if (scanner.peek() === ']') return texts;
    scanner.expect(',');
  }
}

/**
 * The id of one record's exact text, as Postgres bigint text, when its
 * top-level `id` is an integral number (`10`, `10.0`, `1e3` are not all the
 * same text, but the same integer); undefined otherwise.
 */
export function topLevelId(text: string): string | undefined {
  const id = idToken(text);
  const digits = id === undefined ? undefined : /^(-?\d+)(?:\.0*)?$/.exec(id)?.[1];
  return digits === undefined ? undefined : inBigint(BigInt(digits));
}

/**
 * The id a rejected record's exact text carries, as an erasure reads it
 * (sql/erase-records.ts reads those kept as jsonb alike): an integral number
 * in any form (`123`, `123.0`, `1.23e2`), or a string of digits, spaces
 * around them ignored (the wrong type the record was rejected for);
 * undefined otherwise.
 */
export function carriedId(text: string): string | undefined {
  const token = idToken(text);
  if (token === undefined) return undefined;
  if (!token.startsWith('"')) return integerOf(token);
  try {
    const digits = (JSON.parse(token) as string).trim();
    return /^-?\d+$/.test(digits) ? inBigint(BigInt(digits)) : undefined;
  } catch {
    return undefined;
  }
}

/** The text of the top-level `id` of an object's exact text (the last, as JSON.parse and Postgres take); undefined when none. */
function idToken(text: string): string | undefined {
  const scanner = new Scanner(text);
  try {
    scanner.skipSpace();
    let id: string | undefined;
    scanner.members((key, start, end) => {
      if (key === 'id') id = text.slice(start, end);
    });
    return id;
  } catch {
    return undefined;
  }
}

/** The integer a JSON number's text is (`10`, `10.0`, `1e1`), as bigint text; undefined when it is none or beyond bigint. */
function integerOf(token: string): string | undefined {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(token);
  if (!m) return undefined;
  const [, sign = '', whole = '', fraction = '', exponent = '0'] = m;
  const all = `${whole}${fraction}`;
  const shift = Number(exponent) - fraction.length;
  let digits: string;
  if (shift < 0) {
    const at = Math.max(0, all.length + shift);
    if (!/^0*$/.test(all.slice(at))) return undefined;
    digits = all.slice(0, at) || '0';
  } else {
    const significant = all.replace(/^0+/, '');
    // 19 digits at most within bigint: a larger shift is out of range (and never built).
    if (significant.length + shift > 19) return significant === '' ? '0' : undefined;
    digits = significant === '' ? '0' : `${significant}${'0'.repeat(shift)}`;
  }
  return inBigint(BigInt(`${sign}${digits}`));
}

function inBigint(value: bigint): string | undefined {
  return value >= -(2n ** 63n) && value < 2n ** 63n ? value.toString() : undefined;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const COMMA = 0x2c;

/** JSON's four whitespace characters. */
function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

class Scanner {
  pos = 0;
  readonly #text: string;

  constructor(text: string) {
    this.#text = text;
  }

  peek(): string {
    return this.#text.charAt(this.pos);
  }

  expect(char: string): void {
    if (this.#text.charAt(this.pos) !== char) {
      throw new Error(`expected ${JSON.stringify(char)} at offset ${this.pos} of the body`);
    }
    this.pos += 1;
  }

  skipSpace(): void {
    while (isSpace(this.#text.charCodeAt(this.pos))) this.pos += 1;
  }

  /**
   * Walks the members of the object at the current position (past its closing
   * brace), calling `visit` with each key and its value's start and end.
   */
  members(visit: (key: string, start: number, end: number) => void): void {
    this.expect('{');
    this.skipSpace();
    if (this.peek() === '}') {
      this.pos += 1;
      return;
    }
    for (;;) {
      this.skipSpace();
      const key = this.readString();
      this.skipSpace();
      this.expect(':');
      this.skipSpace();
      const start = this.pos;
      this.skipValue();
      visit(key, start, this.pos);
      this.skipSpace();
      if (this.peek() === '}') {
        this.pos += 1;
        return;
      }
      this.expect(',');
    }
  }

  /** Reads a string token and returns its value. */
  readString(): string {
    const start = this.pos;
    this.skipString();
    return JSON.parse(this.#text.slice(start, this.pos)) as string;
  }

  skipString(): void {
    if (this.#text.charCodeAt(this.pos) !== QUOTE) this.expect('"');
    let i = this.pos + 1;
    for (;;) {
      const c = this.#text.charCodeAt(i);
      if (Number.isNaN(c)) throw new Error('unterminated string in the body');
      if (c === BACKSLASH) i += 2;
      else if (c === QUOTE) break;
      else i += 1;
    }
    this.pos = i + 1;
  }

  /** Skips one value (object, array, string or scalar) with a depth counter, not recursion. */
  skipValue(): void {
    let depth = 0;
    for (;;) {
      const c = this.#text.charCodeAt(this.pos);
      if (Number.isNaN(c)) throw new Error('unexpected end of the body');
      if (c === QUOTE) {
        this.skipString();
        if (depth === 0) return;
      } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
        depth += 1;
        this.pos += 1;
      } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
        if (depth === 0) return;
        depth -= 1;
        this.pos += 1;
        if (depth === 0) return;
      } else if (depth === 0 && (c === COMMA || isSpace(c))) {
        return;
      } else {
        this.pos += 1;
      }
    }
  }
}
