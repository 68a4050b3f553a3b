// A file the service depends on that may change while it runs: a rotated Secret (bearer token,
// TLS certificate) or an edited ConfigMap (lattice policy). Kubernetes swaps such files through
// symlinks, which file-system events miss, so the file's stat is polled; a new content that does
// not parse is logged and the previous one kept.
import { readFileSync, unwatchFile, watchFile } from 'node:fs';
import type { Logger } from 'pino';

export class WatchedFile<T> {
  private value: T;

  /** Reads the file now: a missing or bad file at start is an error the caller reports. */
  constructor(
    readonly path: string,
    private readonly parse: (text: string) => T,
    private readonly logger: Logger,
    private readonly onChange?: (value: T) => void,
    intervalMs = 2000,
  ) {
    this.value = parse(readFileSync(path, 'utf8'));
    watchFile(path, { interval: intervalMs, persistent: false }, (current, previous) => {
      if (current.mtimeMs !== previous.mtimeMs || current.ino !== previous.ino || current.size !== previous.size) this.reload();
    });
  }

  current(): T {
    return this.value;
  }

  reload(): void {
    try {
      this.value = this.parse(readFileSync(this.path, 'utf8'));
      this.logger.info({ path: this.path }, 'reloaded changed file');
      this.onChange?.(this.value);
    } catch (err) {
      this.logger.error(
        { path: this.path, err: (err as Error).message },
        'changed file is unreadable or invalid; keeping the previous content',
      );
    }
  }

  close(): void {
    unwatchFile(this.path);
  }
}
