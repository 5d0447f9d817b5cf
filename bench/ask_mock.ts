/**
 * The one request both plain-`fetch` floors send (bench/fetch_floor.ts as a whole process,
 * bench/throughput.ts in-process): a chat completion posted straight to the mock, its
 * answer checked. Imports nothing of vf, so a floor process loads no engine code.
 *
 * @module
 */

/**
 * Posts one chat completion to `url` and throws unless the reply is `answer`, or ends in a
 * line of it (the mock's long answers, bench/mock_server.ts `answerPadBytes`).
 */
export async function askMock(
  url: string,
  system: string,
  prompt: string,
  answer: string,
): Promise<void> {
  const res = await fetch(`${url}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer sk-bench" },
    body: JSON.stringify({
      model: "bench-model",
      messages: [{ role: "system", content: system }, { role: "user", content: prompt }],
    }),
  });
  const body = await res.json();
  const content: string = body.choices[0].message.content;
  if (content !== answer && !content.endsWith(`\n${answer}`)) throw new Error("wrong answer");
}
