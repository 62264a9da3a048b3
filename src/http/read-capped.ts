/**
 * Reading the body of an outbound request's answer (a rate source, an acknowledgement
 * domain's key list) without trusting its size: the body as UTF-8 text, or `tooLarge()` thrown
 * as soon as more than `maxBytes` arrived (the rest is cancelled, never buffered).
 */
export async function readCapped(res: Response, maxBytes: number, tooLarge: () => Error): Promise<string> {
  const reader = res.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}
