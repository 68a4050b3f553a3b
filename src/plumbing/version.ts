// The version of this build, from package.json, the one place it is written (SemVer). The bundle
// (scripts/build.mjs) carries it as BUNDLED_VERSION; run from source (tsx, the tests), the file is
// read, two folders up from src/plumbing/.
import { readFileSync } from 'node:fs';

declare const BUNDLED_VERSION: string | undefined;

export const VERSION: string = typeof BUNDLED_VERSION === 'string' ? BUNDLED_VERSION : readVersion();

function readVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}
