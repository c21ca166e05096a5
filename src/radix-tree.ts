/** A node of a {@link RadixTree}: the edge into it, and the strings that end at it. */
interface RadixNode {
  /** The characters of the edge from the parent (empty for the root only). */
  label: string;
  /** Children by the first character (UTF-16 code unit) of their label; undefined when none. */
  children: Map<number, RadixNode> | undefined;
  /** How many times the string ending here was added and not yet removed (0: a branch only). */
  holders: number;
}

/**
 * A set of strings (with a count of holders each) in a radix tree, a trie
 * whose chains without a branch are one edge, for finding them in text:
 * - adding or removing a string walks that string only: O(its length),
 *   however many other strings the tree holds (nothing is rebuilt);
 * - {@link longestAt} walks from a position of a text only as far as the
 *   text agrees with some string held, one `Map` lookup per branch, so
 *   {@link replaceAll} costs O(text length × that depth): a property of the
 *   text and of how far held strings share prefixes with it, not of their
 *   number (against random strings the depth grows by one branch per ×64
 *   strings, so it stays at 2–4 lookups per position for 10^5 strings).
 * Memory: the strings' characters (edge labels are slices of them) and two
 * nodes per string at most.
 */
export class RadixTree {
  readonly #root: RadixNode = { label: '', children: undefined, holders: 0 };
  #size = 0;
  #nodes = 1;
  #steps = 0;

  /** Distinct strings held. */
  get size(): number {
    return this.#size;
  }

  /** Nodes of the tree, the root included. */
  get nodes(): number {
    return this.#nodes;
  }

  /**
   * Nodes visited so far by every add, remove and lookup: a count of work,
   * for tests and benchmarks that check what an operation costs.
   */
  get steps(): number {
    return this.#steps;
  }

  /** Adds one holder of `key` (a string already held gets one more). */
  add(key: string): void {
    let node = this.#root;
    let i = 0;
    for (;;) {
      this.#steps += 1;
      if (i === key.length) {
        if (node.holders === 0) this.#size += 1;
        node.holders += 1;
        return;
      }
      const first = key.charCodeAt(i);
      const child = node.children?.get(first);
      if (child === undefined) {
        node.children ??= new Map();
        node.children.set(first, { label: key.slice(i), children: undefined, holders: 1 });
        this.#size += 1;
        this.#nodes += 1;
        return;
      }
      const label = child.label;
      let common = 1;
      while (
        common < label.length &&
        i + common < key.length &&
        label.charCodeAt(common) === key.charCodeAt(i + common)
      ) {
        common += 1;
      }
      if (common < label.length) {
        // The key leaves (or ends inside) this edge: split it where they part.
        // The upper half keeps the object, so the parent's map stays right.
        const lower: RadixNode = {
          label: label.slice(common),
          children: child.children,
          holders: child.holders,
        };
        child.label = label.slice(0, common);
        child.children = new Map([[lower.label.charCodeAt(0), lower]]);
        child.holders = 0;
        this.#nodes += 1;
      }
      node = child;
      i += common;
    }
  }

  /** Removes one holder of `key`; the string is gone with its last holder. False if not held. */
  remove(key: string): boolean {
    let parent: RadixNode | undefined;
    let node = this.#root;
    let i = 0;
    while (i < key.length) {
      this.#steps += 1;
      const child = node.children?.get(key.charCodeAt(i));
      if (child === undefined || !key.startsWith(child.label, i)) return false;
      parent = node;
      node = child;
      i += child.label.length;
    }
    if (node.holders === 0) return false;
    node.holders -= 1;
    if (node.holders > 0) return true;
    this.#size -= 1;
    if (parent === undefined) return true; // the empty string, held by the root
    if (node.children === undefined) {
      parent.children?.delete(node.label.charCodeAt(0));
      this.#nodes -= 1;
      if (parent.children?.size === 0) parent.children = undefined;
      // A parent left with one child and no string of its own is only an edge.
      if (parent !== this.#root && parent.holders === 0) this.#mergeWithOnlyChild(parent);
    } else {
      this.#mergeWithOnlyChild(node);
    }
    return true;
  }

  /** Joins `node` and its only child into one edge; does nothing when it has 0 or 2+ children. */
  #mergeWithOnlyChild(node: RadixNode): void {
    if (node.children?.size !== 1) return;
    const only = node.children.values().next().value as RadixNode;
    node.label += only.label;
    node.children = only.children;
    node.holders = only.holders;
    this.#nodes -= 1;
  }

  /** Length of the longest string held that starts at `text[start]`; 0 when none. */
  longestAt(text: string, start: number): number {
    let node = this.#root;
    let i = start;
    let longest = 0;
    for (;;) {
      this.#steps += 1;
      const child = node.children?.get(text.charCodeAt(i));
      if (child === undefined || !text.startsWith(child.label, i)) return longest;
      i += child.label.length;
      if (child.holders > 0) longest = i - start;
      node = child;
    }
  }

  /**
   * `text` with every string held replaced by `replacement`, scanning left to
   * right and taking the longest string held at each position (as a regular
   * expression of the strings as alternatives, longest first, would).
   */
  replaceAll(text: string, replacement: string): string {
    let out: string | undefined;
    let copied = 0;
    let i = 0;
    while (i < text.length) {
      const length = this.longestAt(text, i);
      if (length === 0) {
        i += 1;
        continue;
      }
      out = `${out ?? ''}${text.slice(copied, i)}${replacement}`;
      i += length;
      copied = i;
    }
    return out === undefined ? text : out + text.slice(copied);
  }
}
