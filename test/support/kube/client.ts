// A minimal HTTPS client of the test API server: JSON requests with the bearer token. Node's fetch
// cannot take a private CA, so node:https.
import { request as httpsRequest, type RequestOptions } from 'node:https';
import type { IncomingMessage } from 'node:http';

export interface KubeResponse<T = any> {
  status: number;
  body: T;
}

export class KubeClient {
  constructor(
    readonly url: string,
    private readonly token: string,
    private readonly ca: Buffer,
  ) {}

  async request<T = any>(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<KubeResponse<T>> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const res = await this.open(method, path, payload === undefined ? {} : { 'Content-Type': contentType }, payload);
    const text = await readAll(res);
    // /readyz and friends answer plain text.
    const isJson = (res.headers['content-type'] ?? '').startsWith('application/json');
    return { status: res.statusCode ?? 0, body: (isJson ? JSON.parse(text) : text) as T };
  }

  private open(method: string, path: string, headers: Record<string, string>, payload?: string): Promise<IncomingMessage> {
    const url = new URL(path, this.url);
    const options: RequestOptions = {
      method,
      hostname: url.hostname,
      port: url.port,
      path: `${url.pathname}${url.search}`,
      ca: this.ca,
      headers: { Accept: 'application/json', Authorization: `Bearer ${this.token}`, ...headers },
    };
    return new Promise((resolve, reject) => {
      const req = httpsRequest(options, resolve);
      req.on('error', reject);
      req.end(payload);
    });
  }
}

function readAll(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => (text += chunk));
    res.on('end', () => resolve(text));
    res.on('error', reject);
  });
}
