import type { ServerResponse } from 'node:http';
import type { HttpAnswer } from '../../receiver/http-answer.js';

/**
 * Sends an {@link HttpAnswer} on a Node `ServerResponse` (status, headers, JSON body with its
 * `content-length`). Does nothing if the response was already sent.
 */
export function writeAnswer(res: ServerResponse, answer: HttpAnswer): void {
  if (res.headersSent || res.writableEnded) return;
  const { body } = answer;
  res.writeHead(answer.status, { ...answer.headers, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
