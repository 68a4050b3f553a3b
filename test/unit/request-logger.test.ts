// request.log builds its pino child only when something is logged: a settled resync logs nothing
// and must not pay for one; what is logged carries the request id as before.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Logger } from 'pino';
import { requestLoggerFactory } from '../../src/http/request-logger.js';
import { createLogger } from '../../src/plumbing/logger.js';
import { jsonLogSink } from '../support/logs.js';

function counted(level: string) {
  const { sink, lines } = jsonLogSink();
  const root = createLogger(level, sink);
  // Children of pino loggers inherit the root's properties: count only children of the root itself.
  let children = 0;
  const child = root.child;
  root.child = function (this: Logger, ...args: Parameters<Logger['child']>) {
    if (this === root) children++;
    return child.apply(this, args);
  } as Logger['child'];
  const log = requestLoggerFactory(root, { reqId: 'req-1' }, {}) as unknown as Logger;
  return { log, lines, children: () => children };
}

describe('the request logger', () => {
  it('builds no pino child for a call that logs nothing, nor for levels that are off', () => {
    const { log, lines, children } = counted('info');
    assert.equal(log.level, 'info');
    assert.equal(log.isLevelEnabled('debug'), false);
    log.debug('not shown');
    log.trace({ a: 1 }, 'not shown');
    assert.equal(children(), 0);
    assert.deepEqual(lines, []);
  });

  it('logs with the request id through one child, built on the first line', async () => {
    const { log, lines, children } = counted('debug');
    log.info({ hook: 'sync' }, 'first');
    log.warn('second');
    log.child({ name: 'hello' }).error('third');
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(children(), 1);
    assert.deepEqual(
      lines.map((l) => [l['msg'], l['reqId'], l['level']]),
      [
        ['first', 'req-1', 30],
        ['second', 'req-1', 40],
        ['third', 'req-1', 50],
      ],
    );
    assert.equal(lines[0]!['hook'], 'sync');
    assert.equal(lines[2]!['name'], 'hello');
  });
});
