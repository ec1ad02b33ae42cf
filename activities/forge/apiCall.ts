import { ApplicationFailure } from '@temporalio/activity';
import { isHttpUrl, renderTemplate } from '../../api/forge/template';

export interface HttpActionResult {
  status: number;
  body: string;
}

const BODY_LOG_LIMIT = 4096;

/**
 * One HTTP request as an action describes it (templated with the run's parameters). 5xx and
 * network errors throw a retryable failure, so the activity retry policy tries again; a 4xx or
 * an invalid URL is the caller's mistake and fails the step at once.
 */
export async function httpAction(
  request: { method: string; url: string; headers?: Record<string, string>; body?: unknown; timeoutSeconds: number },
  parameters: Record<string, unknown>,
  signal: AbortSignal,
): Promise<HttpActionResult> {
  const url = String(renderTemplate(request.url, parameters));
  if (!isHttpUrl(url)) throw ApplicationFailure.nonRetryable(`"${url}" is not an absolute http(s) URL`, 'InvalidUrl');
  const headers = renderTemplate(request.headers ?? {}, parameters) as Record<string, string>;
  const body = request.body === undefined ? undefined : renderTemplate(request.body, parameters);
  const timeout = AbortSignal.timeout(request.timeoutSeconds * 1000);
  let res: Response;
  try {
    res = await fetch(url, {
      method: request.method,
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      signal: AbortSignal.any([signal, timeout]),
    });
  } catch (err) {
    if (signal.aborted) throw err;
    throw ApplicationFailure.retryable(`${request.method} ${url} failed: ${(err as Error).message}`, 'NetworkError');
  }
  const text = (await res.text()).slice(0, BODY_LOG_LIMIT);
  if (res.status >= 500) throw ApplicationFailure.retryable(`${request.method} ${url} answered ${res.status}`, 'ServerError');
  if (res.status >= 400) {
    throw ApplicationFailure.nonRetryable(`${request.method} ${url} answered ${res.status}: ${text.slice(0, 500)}`, 'ClientError');
  }
  return { status: res.status, body: text };
}
