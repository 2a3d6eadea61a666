// A Server-Sent Events reader over a fetch body (the WHATWG event-stream
// format): no EventSource needed, so any header can be sent.

export interface SSEMessage {
  event: string;
  data: string;
  /** The id field when the message had one, else undefined. */
  id: string | undefined;
  retry: number | undefined;
}

export async function* readSSE(body: ReadableStream<Uint8Array>): AsyncGenerator<SSEMessage, void, undefined> {
  const decoder = new TextDecoder();
  let buf = "";
  let event = "";
  let data: string[] = [];
  let id: string | undefined;
  let retry: number | undefined;
  let seen = false;
  const reader = body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buf.search(/\r\n|\r|\n/)) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + (buf[nl] === "\r" && buf[nl + 1] === "\n" ? 2 : 1));
        if (line === "") {
          if (seen) yield { event: event || "message", data: data.join("\n"), id, retry };
          event = "";
          data = [];
          id = undefined;
          retry = undefined;
          seen = false;
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? "" : line.slice(colon + 1);
        if (value.startsWith(" ")) value = value.slice(1);
        seen = true;
        if (field === "event") event = value;
        else if (field === "data") data.push(value);
        else if (field === "id") id = value;
        else if (field === "retry" && /^\d+$/.test(value)) retry = Number(value);
      }
    }
  } finally {
    reader.cancel().catch(() => {});
  }
}
