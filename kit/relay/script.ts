/**
 * The relay's in-sandbox end, as the source of one self-contained JavaScript module given on
 * the command line to the JavaScript runtime found there (`bun`, `node` or `deno`), else to
 * the host's own runtime copied there (`carrier.ts`), so no file of it is left behind:
 * it listens on the sandbox's 127.0.0.1 (an OS-chosen port, said in a `HELLO` frame) and
 * carries each connection over its stdin and stdout in the frames of `frames.ts`. It exits
 * when its stdin ends (the host closed the session or died), so it never outlives the
 * session, and with the sandbox. Its only imports are `node:net` and `node:process`.
 *
 * @module
 */
import { DATA, END, HELLO, OPEN, RESET } from "./frames.ts";

/** The source of the in-sandbox relay (an ES module). */
export const RELAY_SCRIPT = `import net from "node:net";
import process from "node:process";
const [HELLO, OPEN, DATA, END, RESET] = [${HELLO}, ${OPEN}, ${DATA}, ${END}, ${RESET}];
const sockets = new Map();
function send(kind, id, data) {
  const n = data ? data.length : 0;
  const frame = Buffer.alloc(9 + n);
  frame[0] = kind;
  frame.writeUInt32BE(4 + n, 1);
  frame.writeUInt32BE(id, 5);
  if (data) data.copy(frame, 9);
  process.stdout.write(frame);
}
let next = 1;
const server = net.createServer({ allowHalfOpen: true }, (socket) => {
  const id = next++;
  sockets.set(id, socket);
  socket.setNoDelay(true);
  send(OPEN, id);
  socket.on("data", (d) => send(DATA, id, d));
  socket.on("end", () => { if (sockets.has(id)) send(END, id); });
  socket.on("close", () => { if (sockets.delete(id)) send(RESET, id); });
  socket.on("error", () => {});
});
server.on("error", (e) => { process.stderr.write("relay: " + e.message + "\\n"); process.exit(1); });
server.listen(0, "127.0.0.1", () => send(HELLO, server.address().port));
let chunks = [];
let buffered = 0;
function take(n) {
  const all = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
  chunks = all.length > n ? [all.subarray(n)] : [];
  buffered -= n;
  return all.subarray(0, n);
}
function peek(n) {
  if (chunks[0].length < n) chunks = [Buffer.concat(chunks)];
  return chunks[0];
}
process.stdin.on("data", (chunk) => {
  chunks.push(chunk);
  buffered += chunk.length;
  while (buffered >= 5) {
    const length = peek(5).readUInt32BE(1);
    if (buffered < 5 + length) break;
    const frame = take(5 + length);
    const kind = frame[0];
    const id = frame.readUInt32BE(5);
    const socket = sockets.get(id);
    if (!socket) continue;
    if (kind === DATA) socket.write(frame.subarray(9));
    else if (kind === END) socket.end();
    else if (kind === RESET) { sockets.delete(id); socket.destroy(); }
  }
});
const quit = () => process.exit(0);
process.stdin.on("end", quit);
process.stdin.on("close", quit);
process.stdout.on("error", quit);
`;

/** What the launch says on stderr when the sandbox has no JavaScript runtime (exit 127). */
export const NO_RUNTIME = "vf-relay: no JavaScript runtime on ";

/**
 * The `sh` program that runs the relay's module (`$1`) with the first JavaScript runtime on
 * the sandbox's PATH, else with the carrier installed in folder `$2` (`carrier.ts`; `$3`
 * names its loader, empty for a static executable; the rest are its arguments before the
 * module). The relay's last argument, `vf-relay-in-sandbox`, names it in a process list.
 * Exit 127 with {@link NO_RUNTIME} and the machine type on stderr when neither is
 * there.
 */
export const RELAY_LAUNCH = "code=$1; dir=$2; loader=$3; shift 3; n=vf-relay-in-sandbox; " +
  'if command -v bun >/dev/null 2>&1; then exec bun -e "$code" $n; fi; ' +
  'if command -v node >/dev/null 2>&1; then exec node --input-type=module -e "$code" $n; fi; ' +
  'if command -v deno >/dev/null 2>&1; then exec deno eval "$code" $n; fi; ' +
  'if [ -x "$dir/runtime" ]; then ' +
  'export BUN_BE_BUN=1 DENO_DIR="$dir/deno" DENO_NO_UPDATE_CHECK=1; ' +
  'if [ -n "$loader" ]; then ' +
  'exec "$dir/lib/$loader" --library-path "$dir/lib" "$dir/runtime" "$@" "$code" $n; fi; ' +
  'exec "$dir/runtime" "$@" "$code" $n; fi; ' +
  `echo "${NO_RUNTIME}$(uname -m 2>/dev/null)" >&2; exit 127`;
