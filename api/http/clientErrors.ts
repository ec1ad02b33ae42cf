import { STATUS_CODES, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { ERROR_STATUS, type ErrorCode } from '../../core/errors';
import { errorEnvelope } from './errorHandler';
import { requestIdSource } from './requestIds';

/** What Node's parser refused, as our error codes; anything else it refuses is a bad request. */
const PARSER_ERRORS: Record<string, { code: ErrorCode; message: string }> = {
  HPE_HEADER_OVERFLOW: {
    code: 'REQUEST_HEADERS_TOO_LARGE',
    message: 'The request line and headers are larger than this server accepts',
  },
  ERR_HTTP_REQUEST_TIMEOUT: { code: 'REQUEST_TIMEOUT', message: 'The request did not arrive in time' },
};
const MALFORMED = { code: 'INVALID_REQUEST', message: 'The request is not valid HTTP/1.1' } as const;

/**
 * Requests Node's HTTP parser refuses before any middleware sees them (a request line and
 * headers over Node's 16 KiB limit, a malformed request, one that never finished arriving) get
 * the error envelope too, instead of Node's bare status line: 431, 408 or 400. The connection
 * closes after it, since the parser cannot find the next request; one whose response had begun
 * is only closed.
 */
export function answerClientErrors(server: Server): void {
  const nextRequestId = requestIdSource();
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    const answering = (socket as Socket & { _httpMessage?: { headersSent: boolean } })._httpMessage;
    // A reset connection (the client left) takes no answer, nor does one already answering.
    if (err.code === 'ECONNRESET' || !socket.writable || answering?.headersSent) {
      socket.destroy();
      return;
    }
    const { code, message } = PARSER_ERRORS[err.code ?? ''] ?? MALFORMED;
    const status = ERROR_STATUS[code];
    const requestId = nextRequestId();
    const body = JSON.stringify(errorEnvelope(code, message, [], requestId));
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
  });
}
