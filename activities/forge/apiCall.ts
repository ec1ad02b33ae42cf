import { ApplicationFailure } from '@temporalio/activity';
import { renderTemplate, TemplateTooLargeError, type RenderOptions } from '../../core/forge/template';
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

/** config.forgeTemplates: caps on the request's parts once its parameters are filled in. */
export interface TemplateLimits {
  urlBytes: number;
  headersBytes: number;
  bodyBytes: number;
}

/**
 * renderTemplate, with a template over its cap failing the step for good: the same parameters
 * would fill it in the same way on every retry.
 */
export function renderOrFail(value: unknown, parameters: Record<string, unknown>, options: RenderOptions): unknown {
  try {
    return renderTemplate(value, parameters, options);
  } catch (err) {
    if (err instanceof TemplateTooLargeError) throw ApplicationFailure.nonRetryable(err.message, 'TemplateTooLarge');
    throw err;
  }
}

/**
 * One HTTP request as an action describes it (templated with the run's parameters), through the
 * egress guard. 5xx, timeouts and network errors throw a retryable failure, so the activity
 * retry policy tries again; a 4xx, an invalid URL or a refused destination is the caller's
 * mistake and fails the step at once, as does a URL, headers or body over its cap in `limits`.
 */
export async function httpAction(
  egress: EgressClient,
  request: { method: string; url: string; headers?: Record<string, string>; body?: unknown; timeoutSeconds: number },
  parameters: Record<string, unknown>,
  limits: TemplateLimits,
  signal: AbortSignal,
): Promise<HttpActionResult> {
  const url = String(renderOrFail(request.url, parameters, { maxBytes: limits.urlBytes, what: 'the URL' }));
  const headers = renderOrFail(request.headers ?? {}, parameters, {
    maxBytes: limits.headersBytes,
    what: 'the headers',
  }) as Record<string, string>;
  const body =
    request.body === undefined
      ? undefined
      : renderOrFail(request.body, parameters, { maxBytes: limits.bodyBytes, what: 'the body' });
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
