/**
 * JSON.rawJSON and JSON.isRawJSON (Node 22, V8's "JSON.parse source text
 * access"), which TypeScript's lib does not declare yet: a number kept as the
 * digits it was sent with, printed by JSON.stringify exactly so.
 */
declare global {
  interface JSON {
    rawJSON(text: string): Readonly<{ rawJSON: string }>;
    isRawJSON(value: unknown): boolean;
  }
}

export {};
