// Relative links between Markdown files, checked as GitHub resolves them: the file must exist and
// a `#anchor` must be a heading of that file. Links to other sites are not followed.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

/**
 * GitHub's anchor for a heading's text: lowercase, punctuation and symbols dropped but `-`, `_`
 * and spaces, each space a `-` (so "20 % go" is `20--go`).
 */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M} _-]/gu, '')
    .replace(/ /g, '-');
}

/** The text with fenced code blocks (indented ones in lists too) blanked out, line for line. */
function withoutFences(markdown: string): string {
  let fence: string | undefined;
  return markdown
    .split('\n')
    .map((line) => {
      const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
      if (fence === undefined && marker !== undefined) fence = marker;
      else if (
        fence !== undefined &&
        marker !== undefined &&
        marker[0] === fence[0] &&
        marker.length >= fence.length &&
        line.trim() === marker
      )
        fence = undefined;
      else if (fence === undefined) return line;
      return '';
    })
    .join('\n');
}

/** The text outside code blocks and code spans, where a `#` or `[x](y)` is Markdown. */
function prose(markdown: string): string {
  return withoutFences(markdown).replace(/`[^`\n]*`/g, '');
}

/** The anchors of a file's headings, a repeated heading's with `-1`, `-2`… as GitHub numbers them. */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  const headings = withoutFences(markdown).matchAll(/^#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/gm);
  for (const [, text] of headings) {
    const base = slug(text!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    out.add(count === 0 ? base : `${base}-${count}`);
  }
  return out;
}

/** Every inline link and reference definition of a file: its target as written. */
export function linkTargets(markdown: string): string[] {
  const text = prose(markdown);
  const inline = [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
  const definitions = [...text.matchAll(/^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((m) => m[1]!);
  return [...inline, ...definitions];
}

/**
 * The relative links of `files` (paths under `root`) that point nowhere: `file: target (why)`.
 * Absolute URLs (`https:`, `mailto:`…) are left alone.
 */
export function brokenLinks(root: string, files: string[]): string[] {
  const broken: string[] = [];
  const anchorsOf = new Map<string, Set<string>>();
  const headingsOf = (path: string) => {
    if (!anchorsOf.has(path)) anchorsOf.set(path, anchors(readFileSync(path, 'utf8')));
    return anchorsOf.get(path)!;
  };
  for (const file of files) {
    const path = join(root, file);
    for (const target of linkTargets(readFileSync(path, 'utf8'))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const [pathPart, anchor] = target.split('#', 2) as [string, string | undefined];
      const destination = pathPart === '' ? path : join(dirname(path), decodeURI(pathPart));
      if (!existsSync(destination)) {
        broken.push(`${file}: ${target} (no file ${relative(root, destination)})`);
      } else if (anchor !== undefined && destination.endsWith('.md') && !headingsOf(destination).has(decodeURI(anchor))) {
        broken.push(`${file}: ${target} (no heading #${anchor} in ${relative(root, destination)})`);
      }
    }
  }
  return broken;
}
