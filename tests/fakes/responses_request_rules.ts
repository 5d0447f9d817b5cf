/**
 * What the fake Responses server rejects in a request body, worded as the API words it
 * (`Unknown parameter: 'seed'.`, `Invalid 'max_output_tokens': integer below minimum
 * value...`, `No tool call found for function call output with call_id ...`).
 *
 * @module
 */

/** Why a request is refused: the message, and the `param`/`code` of the error body. */
export interface RequestProblem {
  message: string;
  param: string | null;
  code: string | null;
}

/** Top-level parameters of `POST /v1/responses`; any other is refused. */
const PARAMETERS = new Set([
  "background",
  "client_metadata",
  "conversation",
  "include",
  "input",
  "instructions",
  "max_output_tokens",
  "max_tool_calls",
  "metadata",
  "model",
  "parallel_tool_calls",
  "previous_response_id",
  "prompt",
  "prompt_cache_key",
  "reasoning",
  "safety_identifier",
  "service_tier",
  "store",
  "stream",
  "stream_options",
  "temperature",
  "text",
  "tool_choice",
  "tools",
  "top_logprobs",
  "top_p",
  "truncation",
  "user",
]);

/** The tool types the API takes (function and custom tools need a name). */
const TOOL_TYPES: readonly RegExp[] = [
  /^function$/,
  /^custom$/,
  /^local_shell$/,
  /^shell$/,
  /^apply_patch$/,
  /^file_search$/,
  /^web_search(_preview)?(_\d{4}_\d{2}_\d{2})?$/,
  /^computer_use_preview$/,
  /^code_interpreter$/,
  /^image_generation$/,
  /^mcp$/,
  /^namespace$/,
  /^tool_search$/,
];

/** The parameters of `POST /v1/responses/input_tokens`. */
export const COUNT_PARAMETERS: ReadonlySet<string> = new Set([
  "conversation",
  "input",
  "instructions",
  "model",
  "parallel_tool_calls",
  "previous_response_id",
  "reasoning",
  "text",
  "tool_choice",
  "tools",
  "truncation",
]);

const ITEM_TYPES = ["message", "function_call", "function_call_output", "reasoning"];
const ROLES = ["user", "assistant", "system", "developer"];

const problem = (message: string, param: string | null, code: string | null = null) => ({
  message,
  param,
  code,
});

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function checkItem(item: unknown, at: string, calls: Set<string>): RequestProblem | null {
  if (!isObject(item)) return problem(`Invalid type for '${at}': expected an object.`, at);
  const type = item.type ?? (item.role !== undefined ? "message" : undefined);
  if (typeof type !== "string" || !ITEM_TYPES.includes(type)) {
    return problem(
      `Invalid value: '${String(type)}'. Supported values are: ${ITEM_TYPES.join(", ")}.`,
      `${at}.type`,
      "invalid_value",
    );
  }
  if (type === "message") {
    if (typeof item.role !== "string" || !ROLES.includes(item.role)) {
      return problem(`Invalid value: '${String(item.role)}'.`, `${at}.role`, "invalid_value");
    }
    if (typeof item.content !== "string" && !Array.isArray(item.content)) {
      return problem(`Missing required parameter: '${at}.content'.`, `${at}.content`);
    }
  } else if (type === "function_call") {
    for (const key of ["call_id", "name", "arguments"]) {
      if (typeof item[key] !== "string") {
        return problem(`Missing required parameter: '${at}.${key}'.`, `${at}.${key}`);
      }
    }
    calls.add(item.call_id as string);
  } else if (type === "function_call_output") {
    if (typeof item.call_id !== "string" || !calls.has(item.call_id)) {
      return problem(
        `No tool call found for function call output with call_id ${String(item.call_id)}.`,
        "input",
      );
    }
    if (typeof item.output !== "string" && !Array.isArray(item.output)) {
      return problem(`Missing required parameter: '${at}.output'.`, `${at}.output`);
    }
  } else if (!Array.isArray(item.summary)) {
    return problem(`Missing required parameter: '${at}.summary'.`, `${at}.summary`);
  }
  return null;
}

function checkRange(
  body: Record<string, unknown>,
  key: string,
  min: number,
  max: number,
): RequestProblem | null {
  const v = body[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== "number") return problem(`Invalid type for '${key}': expected a number.`, key);
  if (v < min) {
    return problem(
      `Invalid '${key}': decimal below minimum value. ` +
        `Expected a value >= ${min}, but got ${v} instead.`,
      key,
      "decimal_below_min_value",
    );
  }
  if (v > max) {
    return problem(
      `Invalid '${key}': decimal above maximum value. ` +
        `Expected a value <= ${max}, but got ${v} instead.`,
      key,
      "decimal_above_max_value",
    );
  }
  return null;
}

/** The first thing the API would refuse in `body`, or null. */
export function checkRequest(
  body: Record<string, unknown>,
  parameters: ReadonlySet<string> = PARAMETERS,
): RequestProblem | null {
  for (const key of Object.keys(body)) {
    if (!parameters.has(key)) {
      return problem(`Unknown parameter: '${key}'.`, key, "unknown_parameter");
    }
  }
  if (typeof body.model !== "string" || body.model === "") {
    return problem("Missing required parameter: 'model'.", "model", "missing_required_parameter");
  }
  const input = body.input;
  if (input !== undefined && typeof input !== "string") {
    if (!Array.isArray(input)) return problem("Invalid type for 'input'.", "input");
    const calls = new Set<string>();
    for (const [i, item] of input.entries()) {
      const found = checkItem(item, `input[${i}]`, calls);
      if (found) return found;
    }
  }
  if (body.stream !== undefined && typeof body.stream !== "boolean") {
    return problem("Invalid type for 'stream': expected a boolean.", "stream");
  }
  if (body.stream_options !== undefined && body.stream !== true) {
    return problem("'stream_options' is only allowed when 'stream' is true.", "stream_options");
  }
  const cap = body.max_output_tokens;
  if (cap !== undefined && cap !== null) {
    if (!Number.isInteger(cap)) {
      return problem(
        "Invalid type for 'max_output_tokens': expected an integer.",
        "max_output_tokens",
      );
    }
    if ((cap as number) < 16) {
      return problem(
        "Invalid 'max_output_tokens': integer below minimum value. " +
          `Expected a value >= 16, but got ${cap} instead.`,
        "max_output_tokens",
        "integer_below_min_value",
      );
    }
  }
  const range = checkRange(body, "temperature", 0, 2) ?? checkRange(body, "top_p", 0, 1);
  if (range) return range;
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) return problem("Invalid type for 'tools'.", "tools");
    for (const [i, tool] of body.tools.entries()) {
      const type = isObject(tool) ? tool.type : undefined;
      if (typeof type !== "string" || !TOOL_TYPES.some((t) => t.test(type))) {
        return problem(`Invalid value: '${String(type)}'.`, `tools[${i}].type`, "invalid_value");
      }
      const named = type === "function" || type === "custom";
      if (named && typeof (tool as Record<string, unknown>).name !== "string") {
        return problem(`Missing required parameter: 'tools[${i}].name'.`, `tools[${i}].name`);
      }
      const parameters = (tool as Record<string, unknown>).parameters;
      if (
        type === "function" && parameters !== undefined && parameters !== null &&
        !isObject(parameters)
      ) {
        return problem(`Invalid type for 'tools[${i}].parameters'.`, `tools[${i}].parameters`);
      }
    }
  }
  return null;
}
