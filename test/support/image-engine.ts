// scripts/image-engine.sh for a test file of `npm test`: the image tier's Docker engine with its
// stand-in bases and a registry on loopback, started in a `before` hook and stopped in `after`.
// Its settings go to process.env (IMAGE_TEST_DOCKER, IMAGE_TEST_SOCKET), so container.ts's docker()
// talks to it, as in the image and release tiers.
import { spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { resolve } from 'node:path';

const SCRIPT = resolve(import.meta.dirname, '../../scripts/image-engine.sh');
const STOP_TIMEOUT_MS = 120_000;

export interface ImageEngine {
  /** host:port of the registry on loopback. */
  registry: string;
  /** The stand-in bases, for the Dockerfile's NODE_IMAGE and RUNTIME_IMAGE. */
  buildBase: string;
  runtimeBase: string;
  /** The tag under which the tiers keep the product image built from this tree. */
  productCache: string;
  /** What a docker command line needs to reach this engine. */
  dockerEnv: Record<string, string>;
  stop(): Promise<void>;
}

/** Why no engine can run here (the script's one line: not root, ...), or undefined when one can. */
export function engineUnavailable(): string | undefined {
  const run = spawnSync('bash', [SCRIPT, '--can-run'], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`scripts/image-engine.sh --can-run exited ${run.status}:\n${run.stdout}${run.stderr}`);
  return run.stdout.trim().replace(/^image-engine: skipped: /, '') || undefined;
}

/** Starts the engine (building the bases the first time) and resolves once it and the registry serve. */
export function startImageEngine(): Promise<ImageEngine> {
  const child = spawn('bash', [SCRIPT], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  const settings: Record<string, string> = {};
  return new Promise((ready, fail) => {
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (line) => {
      const setting = /^IMAGE_TEST_([A-Z_]+)=(.*)$/.exec(line);
      if (setting) settings[setting[1]!] = setting[2]!;
      else if (line !== 'ready') process.stderr.write(`${line}\n`); // its progress: bases made, engine up
      if (line !== 'ready') return;
      process.env['IMAGE_TEST_DOCKER'] = settings['DOCKER'];
      process.env['IMAGE_TEST_SOCKET'] = settings['SOCKET'];
      ready({
        registry: settings['REGISTRY']!,
        buildBase: settings['BUILD_BASE']!,
        runtimeBase: settings['RUNTIME_BASE']!,
        productCache: settings['PRODUCT_CACHE']!,
        dockerEnv: { DOCKER_HOST: `unix://${settings['SOCKET']}`, DOCKER_CONFIG: settings['CLIENT_CONFIG']!, DOCKER_BUILDKIT: '0' },
        async stop() {
          child.stdin.end(); // the script's signal to clean up and stop
          const timer = setTimeout(() => child.kill('SIGTERM'), STOP_TIMEOUT_MS);
          await exited;
          clearTimeout(timer);
        },
      });
    });
    void exited.then((code) => fail(new Error(`scripts/image-engine.sh exited ${code} before it was ready (its output is above)`)));
  });
}
