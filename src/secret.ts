import { inspect } from 'node:util';

/**
 * A secret value (client secret, API key, access token) that cannot leak by
 * accident: printing, logging or JSON-encoding it yields `[redacted]`. Only
 * `reveal()` hands out the value, at the one place that must send it.
 */
export class Secret {
  readonly #value: string;
  constructor(value: string) {
    this.#value = value;
  }
  reveal(): string {
    return this.#value;
  }
  toString(): string {
    return '[redacted]';
  }
  toJSON(): string {
    return '[redacted]';
  }
  [inspect.custom](): string {
    return 'Secret([redacted])';
  }
}
