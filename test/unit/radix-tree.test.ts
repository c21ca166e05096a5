import { describe, expect, it } from 'vitest';
import { RadixTree } from '../../src/radix-tree.js';

/** A seeded generator, so that every run checks the same strings. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** What RadixTree.replaceAll must do: a regular expression of the strings, longest first. */
function replaceByRegExp(text: string, keys: Iterable<string>, by: string): string {
  const sorted = [...keys].sort((a, b) => b.length - a.length);
  if (sorted.length === 0) return text;
  const escaped = sorted.map((k) => k.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return text.replace(new RegExp(escaped.join('|'), 'g'), by);
}

describe('RadixTree', () => {
  it('replaces what a longest-first alternation of the strings held would, through adds and removes', () => {
    const next = random(23);
    // A small alphabet, so that strings share prefixes, nest and overlap.
    const word = (min: number, max: number) =>
      Array.from({ length: min + Math.floor(next() * (max - min + 1)) }, () =>
        'abc/+é'.charAt(Math.floor(next() * 6)),
      ).join('');
    const tree = new RadixTree();
    const held = new Map<string, number>();
    for (let round = 0; round < 400; round += 1) {
      const key = word(1, 7);
      if (next() < 0.6 || !held.has(key)) {
        tree.add(key);
        held.set(key, (held.get(key) ?? 0) + 1);
      } else {
        expect(tree.remove(key)).toBe(true);
        const left = (held.get(key) ?? 0) - 1;
        if (left === 0) held.delete(key);
        else held.set(key, left);
      }
      expect(tree.size).toBe(held.size);
      for (const k of held.keys()) expect(tree.longestAt(k, 0), `held ${k}`).toBe(k.length);
      const text = word(0, 40);
      expect(tree.replaceAll(text, '#'), `text ${text}`).toBe(
        replaceByRegExp(text, held.keys(), '#'),
      );
    }
  });

  it('keeps a string until its last holder removes it, and refuses what it does not hold', () => {
    const tree = new RadixTree();
    tree.add('secret');
    tree.add('secret');
    tree.add('sec');
    expect(tree.remove('secretx')).toBe(false);
    expect(tree.remove('secre')).toBe(false);
    expect(tree.remove('secret')).toBe(true);
    expect(tree.longestAt('a secret', 2)).toBe(6);
    expect(tree.remove('secret')).toBe(true);
    expect(tree.longestAt('a secret', 2)).toBe(3);
    expect(tree.remove('secret')).toBe(false);
  });

  it('gives back every node when every string is removed again', () => {
    const next = random(7);
    const tree = new RadixTree();
    const keys = Array.from({ length: 2000 }, () =>
      Math.floor(next() * 36 ** 6)
        .toString(36)
        .repeat(1 + Math.floor(next() * 3)),
    );
    for (const key of keys) tree.add(key);
    expect(tree.nodes).toBeLessThanOrEqual(2 * tree.size + 1);
    for (const key of keys) expect(tree.remove(key)).toBe(true);
    expect(tree.size).toBe(0);
    expect(tree.nodes).toBe(1);
  });

  it('adds a string visiting one node per branch on its path, however many strings it holds', () => {
    const next = random(11);
    const tree = new RadixTree();
    const key = () => Math.floor(next() * 2 ** 52).toString(36);
    for (let i = 0; i < 20_000; i += 1) tree.add(key());
    const fresh = key();
    const before = tree.steps;
    tree.add(fresh);
    expect(tree.steps - before).toBeLessThanOrEqual(fresh.length + 1);
  });
});
