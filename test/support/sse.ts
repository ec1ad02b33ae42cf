// Reading a server-sent event stream in tests (run logs, notifications).

export interface SseEvent<D = Record<string, unknown>> {
  event: string;
  id?: string;
  data: D;
}

/** The events of a server-sent event stream as they arrive (comments skipped), until it ends. */
export async function* sseEvents<D = Record<string, unknown>>(res: Response): AsyncGenerator<SseEvent<D>> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of res.body!) {
    buffer += decoder.decode(chunk, { stream: true });
    const blocks = buffer.split('\n\n');
    buffer = blocks.pop()!;
    for (const block of blocks) {
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (data === undefined) continue;
      yield {
        event: /^event: (.*)$/m.exec(block)?.[1] ?? 'message',
        id: /^id: (.*)$/m.exec(block)?.[1],
        data: JSON.parse(data),
      };
    }
  }
}
