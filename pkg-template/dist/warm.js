// The warm-up the Node and workerd entries run right after `initSync`: one small reduction, so
// that V8 compiles then the wasm and JavaScript functions every call runs (~3 ms), rather than
// during the app's first call (which then takes well under a millisecond). Its messages are
// objects of its own, too few to be kept: nothing an app passes later meets what it left
// behind. (Beside the glue in dist/, which workerd configs embed whole.)

/** A new copy of the warm-up conversation: a system prompt, a tool call and its result. */
export function warmUpMessages() {
  return [
    { role: "system", content: "Answer briefly." },
    { role: "user", content: "What is the weather in Lisbon?" },
    { role: "assistant", content: null, tool_calls: [{ id: "call_w", type: "function", function: { name: "weather", arguments: "{\"city\":\"Lisbon\"}" } }] },
    { role: "tool", tool_call_id: "call_w", content: "{\"sky\":\"sunny\",\"high\":18}" },
    { role: "assistant", content: "Sunny, 18 °C. ☀️" },
    { role: "user", content: "And tomorrow?" },
  ];
}

export const WARM_UP_CONFIG = Object.freeze({ maxTokens: 24 });

/** Runs the warm-up with `reduceSync`. An error is swallowed on purpose: the import must not
 * fail for it (the first call would compile what it runs); the package tests make the same
 * call and check that it succeeds. */
export function warmUp(reduceSync) {
  try {
    reduceSync(warmUpMessages(), WARM_UP_CONFIG);
  } catch {
    // a warm-up only
  }
}
