/**
 * The bytes of one HTTP/1.1 `POST`: request line, `host`, the given header fields and a
 * `content-length` body, in one buffer so that it goes out in one write. Field names must
 * be tokens and values Latin-1 text without control characters (as Node's `http` checks):
 * a CR or LF would split the request.
 *
 * @module
 */
import { Buffer } from "node:buffer";

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const BAD_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
const ASCII = /^[^\u0080-\uffff]*$/;
const encoder = new TextEncoder();

/** The request's bytes; throws on a header field that cannot be sent. */
export function requestBytes(
  url: URL,
  headers: Readonly<Record<string, string>>,
  body: Uint8Array,
): Uint8Array {
  let head = `POST ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\n`;
  for (const name in headers) {
    const key = name.toLowerCase();
    if (key === "host" || key === "content-length" || key === "transfer-encoding") continue;
    const value = String(headers[name]);
    if (!TOKEN.test(name)) throw new Error(`invalid header name ${JSON.stringify(name)}`);
    if (BAD_VALUE.test(value)) throw new Error(`invalid value of header ${name}`);
    head += `${name}: ${value}\r\n`;
  }
  head += `content-length: ${body.byteLength}\r\n\r\n`;
  // a Buffer: a socket write converts any other Uint8Array into one
  const out = Buffer.allocUnsafe(head.length + body.byteLength);
  // ASCII (the usual head) is the same in UTF-8; encodeInto is native on every runtime,
  // while Latin-1 writing is a JavaScript loop on some
  if (ASCII.test(head)) encoder.encodeInto(head, out);
  else out.write(head, 0, "latin1");
  out.set(body, head.length);
  return out;
}
