import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  canonicalTaskJson,
  compareCodePoints,
  PyFloat,
  pythonFloatRepr,
  pythonJsonDumps,
  taskHash,
} from "../kit/tasks/hash.ts";
import { seededRandom } from "../kit/taskset_view.ts";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { runPython } from "./_python.ts";
import { at } from "./_assert.ts";

/**
 * Python side: the task data validated into a pydantic model with `TaskData`'s fields, types
 * and defaults (extra fields allowed, as `WireTaskData`), dumped with
 * `model_dump(mode="json", exclude_none=True)`, then `json.dumps(sort_keys=True)` + sha256.
 */
const PY_HASH = `
import sys, json, hashlib
from typing import Annotated, Literal
from pydantic import BaseModel, ConfigDict, Field

class Closed(BaseModel):
    model_config = ConfigDict(extra="forbid")
class TextPart(Closed):
    type: Literal["text"] = "text"
    text: str
class ImageSource(Closed):
    url: str
class ImagePart(Closed):
    type: Literal["image_url"] = "image_url"
    image_url: ImageSource
Content = str | list[Annotated[TextPart | ImagePart, Field(discriminator="type")]]
class SystemMessage(Closed):
    role: Literal["system"] = "system"
    content: Content
class UserMessage(Closed):
    role: Literal["user"] = "user"
    content: Content
class ToolCall(Closed):
    id: str
    name: str
    arguments: str
class AssistantMessage(Closed):
    role: Literal["assistant"] = "assistant"
    content: str | None = None
    reasoning_content: str | None = None
    tool_calls: list[ToolCall] | None = None
class ToolMessage(Closed):
    role: Literal["tool"] = "tool"
    tool_call_id: str
    content: str
Message = Annotated[SystemMessage | UserMessage | AssistantMessage | ToolMessage, Field(discriminator="role")]
class Artifact(BaseModel):
    source: str
    exclude: list[str] = Field(default_factory=list)
    required: bool = True
class TaskTimeout(BaseModel):
    setup: float | None = None
    agent: float | None = None
    finalize: float | None = None
    scoring: float | None = None
class TaskResources(BaseModel):
    cpu: float | None = None
    memory: float | None = None
    gpu: str | None = None
    disk: float | None = None
class WireTaskData(BaseModel):
    model_config = ConfigDict(extra="allow")
    idx: int | None = None
    name: str | None = None
    description: str | None = None
    prompt: str | list[Message] | None = None
    system_prompt: str | None = None
    image: str | None = None
    workdir: str | None = None
    network_allow: list[str] = Field(default_factory=lambda: ["*"])
    network_block: list[str] = Field(default_factory=list)
    artifacts: list[Artifact] = Field(default_factory=list)
    timeout: TaskTimeout = TaskTimeout()
    resources: TaskResources = TaskResources()

for item in json.loads(sys.stdin.buffer.read().decode("utf-8")):
    data = WireTaskData.model_validate(item).model_dump(mode="json", exclude_none=True)
    s = json.dumps(data, sort_keys=True)
    print(json.dumps({"dumps": s, "hash": hashlib.sha256(s.encode("utf-8")).hexdigest()}))
`;

const SAMPLES: Record<string, unknown>[] = [
  {
    idx: 0,
    name: null,
    prompt: "hello world",
    system_prompt: "Repeat the user's message back to them exactly, with no extra words.",
    answer: "hello world",
  },
  { idx: 1, prompt: "Grüße aus 東京 — naïve café", answer: "ÀÉÎÕÜ ß ø", image: "python:3.12" },
  {
    prompt: "emoji 🎉👍🏽 and 𝄞 (U+1D11E)",
    "😀": 1,
    "\uffff": 2,
    "é": 3,
    B: 4,
    a: 5,
    "a\u0000": 7,
  },
  {
    prompt: [
      { role: "system", content: "be brief" },
      {
        role: "user",
        content: [{ type: "text", text: "hi" }, {
          type: "image_url",
          image_url: { url: "data:," },
        }],
      },
      {
        role: "assistant",
        content: null,
        reasoning_content: null,
        tool_calls: [{ id: "c1", name: "bash", arguments: '{"command": "ls"}' }],
      },
      { role: "tool", tool_call_id: "c1", content: "a.txt" },
    ],
    timeout: { setup: 10, agent: null, scoring: 2.5 },
    resources: { cpu: 2, memory: null, gpu: "A100:2", disk: 0.5 },
    artifacts: [{ source: "/out", required: false }, { source: "logs", exclude: ["*.tmp"] }],
    network_allow: ["example.com"],
    meta: { z: { y: [1, null, { x: null, w: "w" }, [null]] }, empty: {}, list: [], gone: null },
  },
  {
    prompt: 'He said "hi" \\ back\\slash\n\t\r\b\f\u0000\u001f\u007f\u0080 end',
    answer: "</script> & <b>'single'</b>",
    description: "quotes, backslashes and control characters",
  },
  {
    prompt: "numbers",
    values: [0.5, 1e-7, 1e21, 1e16, 1e15, 123.456, -0.0001, 0.0001, 0.00001, 1.5e300, 5e-324],
    more: [2 ** 53, 2 ** 60, -2.5, 1 / 3, 100, 0, -0, 1e20, 9.999999999999999e20, 0.1 + 0.2],
    big: 12345678901234567890,
    flags: [true, false, null],
  },
];

/** Python's answers, committed (written by the test when pydantic is there and they drifted). */
const COMMITTED = join(import.meta.dirname!, "fixtures", "task_hashes.json");

function pythonHasPydantic(): boolean {
  try {
    runPython("import pydantic");
    return true;
  } catch {
    return false;
  }
}

describe("taskHash()", () => {
  const committed = JSON.parse(readFileSync(COMMITTED, "utf8")) as {
    dumps: string;
    hash: string;
  }[];
  const live = pythonHasPydantic()
    ? runPython(PY_HASH, JSON.stringify(SAMPLES)).trim().split("\n").map((l) =>
      JSON.parse(l) as { dumps: string; hash: string }
    )
    : null;
  const expected = live ?? committed;

  it("has committed Python values equal to what Python computes now (when pydantic is installed)", () => {
    if (live) assert.deepEqual(committed, live, "regenerate tests/fixtures/task_hashes.json");
    assert.equal(committed.length, SAMPLES.length);
  });

  it("matches Python's TaskData hash on sample tasks", () => {
    assert.equal(expected.length, SAMPLES.length);
    SAMPLES.forEach((sample, i) => {
      assert.equal(canonicalTaskJson(sample), at(expected, i).dumps, `sample ${i}`);
      assert.equal(taskHash(sample), at(expected, i).hash, `sample ${i}`);
    });
  });

  it("is stable: key order and null fields do not change the hash", () => {
    const a = { prompt: "p", answer: "x", idx: 3 };
    const b = { idx: 3, answer: "x", extra: null, prompt: "p", name: undefined };
    assert.equal(taskHash(a), taskHash(b));
    assert.equal(
      taskHash(a),
      taskHash({ ...a, network_allow: ["*"], timeout: {}, resources: null }),
    );
    assert.notEqual(taskHash(a), taskHash({ ...a, answer: "y" }));
    assert.notEqual(taskHash(a), taskHash({ ...a, meta: { x: null } }));
    assert.match(taskHash(a), /^[0-9a-f]{64}$/);
  });

  it("does not mutate its input", () => {
    const data = {
      prompt: [{ role: "assistant", content: null }],
      gone: null,
      timeout: { setup: 1 },
    };
    taskHash(data);
    assert.deepEqual(data, {
      prompt: [{ role: "assistant", content: null }],
      gone: null,
      timeout: { setup: 1 },
    });
  });
});

describe("pythonJsonDumps()", () => {
  it("matches Python json.dumps(sort_keys=True) on plain values", () => {
    const values: unknown[] = [
      ...SAMPLES,
      null,
      "",
      [],
      {},
      [null, { a: null }],
      "\ud800x\udfff",
      -0,
      1e-7,
    ];
    const py = runPython(
      `import sys, json\nfor v in json.loads(sys.stdin.buffer.read().decode("utf-8")): print(json.dumps(v, sort_keys=True))`,
      JSON.stringify(values),
    ).trim().split("\n");
    assert.deepEqual(values.map(pythonJsonDumps), py);
  });

  it("escapes every UTF-16 code unit as Python does (ensure_ascii), alone and in text", () => {
    const units = Array.from({ length: 0x10000 }, (_, c) => String.fromCharCode(c));
    const values: string[] = [
      ...Array.from({ length: 64 }, (_, i) => units.slice(i * 1024, (i + 1) * 1024).join("")),
      units.slice(0x20, 0x7f).join(""), // printable ASCII, quote and backslash included
      'say "hi" \\ \\\\ / done',
      "emoji \u{1f600} pair, lone \ud83d and \ude00, DEL \u007f, NEL \u0085, LS \u2028",
    ];
    const py = runPython(
      `import sys, json\nfor v in json.loads(sys.stdin.buffer.read().decode("utf-8")): print(json.dumps(v))`,
      JSON.stringify(values),
    ).trim().split("\n");
    assert.equal(py.length, values.length);
    values.forEach((v, i) => assert.equal(pythonJsonDumps(v), py[i], `value ${i}`));
  });

  it("writes non-finite numbers as NaN/Infinity and PyFloat as a float, like Python", () => {
    const py = runPython(
      `import json; print(json.dumps([float("nan"), float("inf"), -float("inf"), {"a": float("nan")}, 10.0]))`,
    ).trim();
    assert.equal(pythonJsonDumps([NaN, Infinity, -Infinity, { a: NaN }, new PyFloat(10)]), py);
  });
});

describe("pythonFloatRepr()", () => {
  it("matches Python repr(float) on fixed and random values", () => {
    const rand = seededRandom(7);
    const values = [
      0.5,
      1e-7,
      1e21,
      1e16,
      1e15,
      1e-4,
      1e-5,
      123456789.125,
      -0,
      0,
      2.5e-308,
      1.7976931348623157e308,
    ];
    for (let i = 0; i < 300; i++) {
      const scale = 10 ** (Math.floor(rand() * 60) - 30);
      values.push((rand() - 0.5) * scale);
      values.push(Math.round(rand() * 1e6) * 10 ** (Math.floor(rand() * 40) - 20));
    }
    const py = runPython(
      `import sys, json\nfor s in json.loads(sys.stdin.read()): print(repr(float(s)))`,
      JSON.stringify(values.map((v) => (Object.is(v, -0) ? "-0.0" : String(v)))),
    ).trim().split("\n");
    assert.deepEqual(values.map(pythonFloatRepr), py);
  });
});

describe("compareCodePoints()", () => {
  it("orders astral characters after the end of the BMP, as Python does", () => {
    assert.deepEqual(["😀", "\uffff", "a"].sort(compareCodePoints), ["a", "\uffff", "😀"]);
    assert.equal(compareCodePoints("ab", "a"), 1);
    assert.equal(compareCodePoints("a", "a"), 0);
  });
});
