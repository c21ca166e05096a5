/**
 * HTML written with a tagged template that escapes every value it is given:
 * text from the database (an account's name, a run's error) can never become
 * markup. Only what another `html` template made is inserted as it is.
 */

/** Markup made by {@link html}: inserted into another template as it is. */
export class SafeHtml {
  constructor(readonly text: string) {}

  toString(): string {
    return this.text;
  }
}

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** `text` as HTML text or a quoted attribute value: & < > " ' escaped. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

/** A value of an `html` template: markup, text (escaped), a list of either, or nothing. */
export type HtmlValue =
  | SafeHtml
  | string
  | number
  | undefined
  | null
  | false
  | readonly HtmlValue[];

function render(value: HtmlValue): string {
  if (value === undefined || value === null || value === false) return '';
  if (value instanceof SafeHtml) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

/**
 * Markup: the template's literal parts as they are, each value escaped
 * (a SafeHtml inserted as it is; lists joined; undefined, null and false left out).
 */
export function html(strings: TemplateStringsArray, ...values: readonly HtmlValue[]): SafeHtml {
  let text = strings[0] ?? '';
  for (const [i, value] of values.entries()) text += render(value) + (strings[i + 1] ?? '');
  return new SafeHtml(text);
}
