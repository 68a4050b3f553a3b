// Bearer-token check of hook calls. Metacontroller (v4.16+) sends `Authorization: Bearer <token>`
// from a Secret; the token file is re-read when it changes, so a rotated Secret works.
import { createHash, timingSafeEqual } from 'node:crypto';

export type Authorize = (header: string | undefined) => boolean;

export function bearerAuthorizer(token: () => string): Authorize {
  return (header) => {
    const expected = token();
    if (expected === '' || header === undefined || !header.startsWith('Bearer ')) return false;
    // Compare digests: equal length always, so neither content nor length leaks through timing.
    return timingSafeEqual(digest(header.slice('Bearer '.length)), digest(expected));
  };
}

/** A token file's content without the trailing newline `kubectl create secret --from-file` keeps. */
export function parseToken(text: string): string {
  const token = text.replace(/\r?\n$/, '');
  if (token === '' || /\s/.test(token)) throw new Error('the bearer token file must hold one token without whitespace');
  return token;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
