// A minimal scanner over JSON text that JSON.parse already accepted. It recovers what JSON.parse hides and Go's
// decoder sees: the members of an object in order, duplicates included.

export interface Member {
  key: string;
  /** Offsets of the member's value in the text. */
  start: number;
  end: number;
}

export function skipSpace(text: string, i: number): number {
  while (i < text.length && ' \t\n\r'.includes(text.charAt(i))) i += 1;
  return i;
}

/** Index just past the value starting at `i` (after whitespace). */
export function valueEnd(text: string, i: number): number {
  const c = text.charAt(i);
  if (c === '"') return stringEnd(text, i);
  if (c === '{') return objectMembers(text, i).end;
  if (c === '[') return arrayElements(text, i).end;
  while (i < text.length && !',]} \t\n\r'.includes(text.charAt(i))) i += 1;
  return i;
}

export function objectMembers(text: string, i: number): { members: Member[]; end: number } {
  const members: Member[] = [];
  i = skipSpace(text, i + 1);
  while (text.charAt(i) !== '}') {
    const keyEnd = stringEnd(text, i);
    const key = JSON.parse(text.slice(i, keyEnd)) as string;
    const start = skipSpace(text, skipSpace(text, keyEnd) + 1);
    const end = valueEnd(text, start);
    members.push({ key, start, end });
    i = skipSpace(text, end);
    if (text.charAt(i) === ',') i = skipSpace(text, i + 1);
  }
  return { members, end: i + 1 };
}

export function arrayElements(text: string, i: number): { elements: Array<{ start: number; end: number }>; end: number } {
  const elements: Array<{ start: number; end: number }> = [];
  i = skipSpace(text, i + 1);
  while (text.charAt(i) !== ']') {
    const end = valueEnd(text, i);
    elements.push({ start: i, end });
    i = skipSpace(text, end);
    if (text.charAt(i) === ',') i = skipSpace(text, i + 1);
  }
  return { elements, end: i + 1 };
}

/** Paths of duplicate keys anywhere under the value at `i`, spelled like sigs.k8s.io/json ("status.a[0].b"). */
export function duplicateKeyPaths(text: string, i: number, path: string, out: Set<string>): Set<string> {
  const c = text.charAt(i);
  if (c === '{') {
    const seen = new Set<string>();
    for (const member of objectMembers(text, i).members) {
      const memberPath = path === '' ? member.key : `${path}.${member.key}`;
      if (seen.has(member.key)) out.add(memberPath);
      seen.add(member.key);
      duplicateKeyPaths(text, member.start, memberPath, out);
    }
  } else if (c === '[') {
    arrayElements(text, i).elements.forEach((element, index) => {
      duplicateKeyPaths(text, element.start, `${path}[${index}]`, out);
    });
  }
  return out;
}

function stringEnd(text: string, i: number): number {
  let j = i + 1;
  while (j < text.length && text.charAt(j) !== '"') j += text.charAt(j) === '\\' ? 2 : 1;
  return j + 1;
}
