// The version of this build, read from package.json, the one place it is written (SemVer). The
// file is two folders up both from src/service/ (tsx, the tests) and from dist/service/ (npm run
// build, the image, which copies package.json to /app next to dist/).
import { readFileSync } from 'node:fs';

const packageJson = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

export const VERSION: string = packageJson.version;
