import { ApplicationFailure } from '@temporalio/activity';
import { renderTemplate } from '../../core/forge/template';
import {
  EgressError,
  type EgressClient,
  type EgressFailure,
  type EgressResponse,
} from '../../core/egress/egressClient';

/** The step output: the status, up to 4 KiB of the body, and whether the body went on. */
export type HttpActionResult = EgressResponse;

/** What the step output keeps of an answer; the rest is not read. */
const BODY_LOG_LIMIT = 4096;

// Timeouts and network errors may pass, so the activity retry policy tries again; the rest
// will not change on a second try.
const RETRYABLE: Record<EgressFailure, boolean> = {
  refused: false,
  'invalid-url': false,
  'too-many-redirects': false,
  timeout: true,
  network: true,
};

const FAILURE_TYPE: Record<EgressFailure, string> = {
  refused: 'EgressRefused',
  'invalid-url': 'InvalidUrl',
  'too-many-redirects': 'TooManyRedirects',
  timeout: 'Timeout',
  network: 'NetworkError',
};

/**
 * One HTTP request as an action describes it (templated with the run's parameters), through the
 * egress guard. 5xx, timeouts and network errors throw a retryable failure, so the activity
 * retry policy tries again; a 4xx, an invalid URL or a refused destination is the caller's
 * mistake and fails the step at once.
 */
export async function httpAction(
  egress: EgressClient,
  request: { method: string; url: string; headers?: Record<string, string>; body?: unknown; timeoutSeconds: number },
  parameters: Record<string, unknown>,
  signal: AbortSignal,
): Promise<HttpActionResult> {
  const url = String(renderTemplate(request.url, parameters));
  const headers = renderTemplate(request.headers ?? {}, parameters) as Record<string, string>;
  const body = request.body === undefined ? undefined : renderTemplate(request.body, parameters);
  let res: EgressResponse;
  try {
    res = await egress.request({
      method: request.method,
      url,
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      timeoutMs: request.timeoutSeconds * 1000,
      maxBodyBytes: BODY_LOG_LIMIT,
      signal,
    });
  } catch (err) {
    // Anything else is the cancellation, which must reach Temporal as it is.
    if (!(err instanceof EgressError)) throw err;
    throw ApplicationFailure.create({
      message: err.message,
      type: FAILURE_TYPE[err.failure],
      nonRetryable: !RETRYABLE[err.failure],
    });
  }
  if (res.status >= 500)
    throw ApplicationFailure.retryable(`${request.method} ${url} answered ${res.status}`, 'ServerError');
  if (res.status >= 400) {
    throw ApplicationFailure.nonRetryable(
      `${request.method} ${url} answered ${res.status}: ${res.body.slice(0, 500)}`,
      'ClientError',
    );
  }
  return res;
}
