// Fastify gives every request a child logger bound to its request id. Most hook calls are settled
// resyncs that log nothing, and building a pino child per call (its bindings serialised, its
// redaction set up) cost ~3 µs of each (docs/benchmarks-history.md, second round of issue 15):
// this one builds it the first time something is logged, with the same bindings.
import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, Level, Logger } from 'pino';

class RequestLogger {
  private logger: Logger | undefined;

  constructor(
    private readonly root: Logger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  private get real(): Logger {
    return (this.logger ??= this.root.child(this.bindings, this.options));
  }

  get level(): string {
    return this.logger?.level ?? this.options.level ?? this.root.level;
  }

  set level(level: string) {
    this.real.level = level;
  }

  isLevelEnabled(level: string): boolean {
    return (this.logger ?? this.root).isLevelEnabled(level);
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): Logger {
    return this.real.child(bindings, options);
  }

  fatal(...args: unknown[]): void {
    this.log('fatal', args);
  }
  error(...args: unknown[]): void {
    this.log('error', args);
  }
  warn(...args: unknown[]): void {
    this.log('warn', args);
  }
  info(...args: unknown[]): void {
    this.log('info', args);
  }
  debug(...args: unknown[]): void {
    this.log('debug', args);
  }
  trace(...args: unknown[]): void {
    this.log('trace', args);
  }
  silent(): void {}

  private log(level: Level, args: unknown[]): void {
    if (this.isLevelEnabled(level)) (this.real[level] as (...a: unknown[]) => void)(...args);
  }
}

/** Fastify's childLoggerFactory: a RequestLogger where Fastify would build a pino child. */
export function requestLoggerFactory(root: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  // Fastify types its logger loosely; ours is the pino root given as loggerInstance.
  return new RequestLogger(root as Logger, bindings, options) as unknown as FastifyBaseLogger;
}
