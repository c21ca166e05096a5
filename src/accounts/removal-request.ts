/** What the operator is asked before data is dropped. */
export type DropQuestion =
  | { of: 'account'; name: string; schema: string; tables: number; rows: number; cascade: string[] }
  | { of: 'left data'; name: string; what: string; cascade: string[] };

/**
 * Whether dropping data is agreed to: `yes` (--yes), asked (`ask`, true to go
 * on), or `no terminal` (it would have to be asked, and cannot be).
 */
export type DropConsent = 'yes' | 'no terminal' | ((question: DropQuestion) => Promise<boolean>);

/** What `accounts remove NAME` is asked to do. */
export interface RemovalRequest {
  name: string;
  /** Drop its schema (or, for an unregistered name, what an earlier registration left stored). */
  dropData: boolean;
  /** Objects of other schemas depending on its schema may go with it. */
  cascade: boolean;
  /** Consulted only when data is to be dropped. */
  consent: DropConsent;
}

/** Why nothing was removed (or dropped), the request being refused. */
export type RemovalRefusal =
  | { kind: 'no terminal'; of: 'account' | 'left data'; name: string; dropping: string }
  | { kind: 'not hiresync'; name: string; schema: string }
  | {
      kind: 'dependents';
      of: 'account' | 'left data';
      name: string;
      schema: string;
      objects: string[];
    }
  | { kind: 'not confirmed'; of: 'account' | 'left data'; name: string };
