// Reading an NDJSON response as a client does: line by line as the bytes arrive, blank lines being
// keep-alives, each event handed to `onEvent` before the next is read (so a test can act mid-stream).
export async function readNdjson<E>(response: Response, onEvent: (event: E) => void | Promise<void> = () => undefined): Promise<E[]> {
  const events: E[] = [];
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffered += decoder.decode(value, { stream: true });
    let newline;
    while ((newline = buffered.indexOf('\n')) >= 0) {
      const raw = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      if (raw.trim() === '') continue;
      const event = JSON.parse(raw) as E;
      events.push(event);
      await onEvent(event);
    }
  }
  return events;
}
