/**
 * What test/unit/docs-links.test.ts needs of Markdown: the relative links a
 * page holds and the anchors its headings get on GitHub.
 */

/** A link written in a Markdown page: its target as written and its line. */
export interface MarkdownLink {
  target: string;
  line: number;
}

/** The page's lines outside fenced code blocks (``` or ~~~), with their numbers. */
function proseLines(text: string): { text: string; line: number }[] {
  const out: { text: string; line: number }[] = [];
  let fence: string | undefined;
  text.split('\n').forEach((line, index) => {
    const marker = /^\s{0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence !== undefined) {
      if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length) {
        fence = undefined;
      }
    } else if (marker !== undefined) {
      fence = marker;
    } else {
      out.push({ text: line, line: index + 1 });
    }
  });
  return out;
}

/** Every inline link `[text](target)` and reference definition `[x]: target`, code spans left out. */
export function linksOf(markdown: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  for (const { text, line } of proseLines(markdown)) {
    const prose = text.replace(/(`+)[^`].*?\1/g, '');
    for (const match of prose.matchAll(/\]\(\s*(<[^>]*>|[^\s)]+)(?:\s+"[^"]*")?\s*\)/g)) {
      links.push({ target: (match[1] ?? '').replace(/^<|>$/g, ''), line });
    }
    const definition = /^\s{0,3}\[[^\]]+\]:\s*(\S+)/.exec(prose);
    if (definition?.[1]) links.push({ target: definition[1].replace(/^<|>$/g, ''), line });
  }
  return links;
}

/** A heading's text as GitHub renders it: code, emphasis and link syntax gone. */
function renderedText(heading: string): string {
  return heading
    .replace(/\s+#+\s*$/, '')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`/g, '')
    .replace(/(\*\*|__|\*)(?=\S)(.*?\S)\1/g, '$2')
    .replace(/<[^>]+>/g, '')
    .trim();
}

/**
 * GitHub's slug rule (github-slugger): lower case; every character that is not
 * a letter, a number, a mark, `_`, `-` or a space removed; each space a `-`.
 */
export function githubSlug(heading: string): string {
  return renderedText(heading)
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a page's headings, a repeated slug numbered `-1`, `-2`… as GitHub does. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text } of proseLines(markdown)) {
    const heading = /^\s{0,3}#{1,6}\s+(.*)$/.exec(text)?.[1];
    if (heading === undefined) continue;
    const slug = githubSlug(heading);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** True for a target outside the repository (a scheme such as https: or mailto:). */
export function isExternal(target: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(target);
}
