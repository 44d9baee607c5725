// What each provider accepts: the pairing rules of tool calls and results, per format.
// Shared by the format tests and the property tests.
import assert from "node:assert/strict";

export const lcType = (m) => (typeof m.getType === "function" ? m.getType() : m.type);

function assertPairedById(calls, results, what) {
  // calls/results: arrays of [position, id]; every result after its call, every call answered.
  const callAt = new Map(calls.map(([p, id]) => [id, p]));
  for (const [p, id] of results) {
    assert.ok(callAt.has(id), `${what}: result ${id} has no call`);
    assert.ok(callAt.get(id) < p, `${what}: result ${id} before its call`);
  }
  const answered = new Set(results.map(([, id]) => id));
  for (const [, id] of calls) assert.ok(answered.has(id), `${what}: call ${id} has no result`);
}

export const accepts = {
  openai(ms) {
    const calls = [], results = [];
    ms.forEach((m, p) => {
      for (const c of m.tool_calls ?? []) calls.push([p, c.id]);
      if (m.role === "tool") {
        results.push([p, m.tool_call_id]);
        const prev = ms.slice(0, p).reverse().find((x) => x.role !== "tool");
        assert.ok(prev?.tool_calls?.some((c) => c.id === m.tool_call_id), "a tool message must answer the preceding tool_calls");
      }
    });
    assertPairedById(calls, results, "openai");
  },
  "openai-responses"(ms) {
    const calls = [], results = [];
    ms.forEach((m, p) => {
      if (m.type === "function_call") calls.push([p, m.call_id]);
      if (m.type === "function_call_output") results.push([p, m.call_id]);
      if (m.type === "reasoning") assert.ok(ms[p + 1] && ms[p + 1].type !== "reasoning", "a reasoning item needs the item after it");
    });
    assertPairedById(calls, results, "openai-responses");
  },
  anthropic(ms) {
    ms.forEach((m, p) => {
      const uses = Array.isArray(m.content) ? m.content.filter((b) => b.type === "tool_use").map((b) => b.id) : [];
      if (uses.length) {
        const next = ms[p + 1];
        assert.ok(next && next.role === "user" && Array.isArray(next.content), "tool_use must be followed by a user message");
        const answered = next.content.filter((b) => b.type === "tool_result").map((b) => b.tool_use_id);
        assert.deepEqual(answered.sort(), uses.sort(), "tool_use ids were found without tool_result blocks immediately after");
      }
      const results = Array.isArray(m.content) ? m.content.filter((b) => b.type === "tool_result") : [];
      if (results.length) {
        const prev = ms[p - 1];
        for (const r of results) {
          assert.ok(prev && Array.isArray(prev.content) && prev.content.some((b) => b.type === "tool_use" && b.id === r.tool_use_id),
            "tool_result must answer a tool_use in the previous message");
        }
      }
    });
    const first = ms.find((m) => m.role !== "system");
    if (first) assert.equal(first.role, "user", "the first message must be a user message");
  },
  vercel(ms) {
    const calls = [], results = [], requests = [], responses = [];
    ms.forEach((m, p) => {
      for (const part of Array.isArray(m.content) ? m.content : []) {
        if (part.type === "tool-call") calls.push([p, part.toolCallId]);
        if (part.type === "tool-result") results.push([p, part.toolCallId]);
        if (part.type === "tool-approval-request") requests.push([p, part.approvalId]);
        if (part.type === "tool-approval-response") responses.push([p, part.approvalId]);
      }
    });
    assertPairedById(calls, results, "vercel tool calls");
    assertPairedById(requests, responses, "vercel approvals");
  },
  "vercel-ui"(ms) {
    for (const m of ms) assert.ok(Array.isArray(m.parts));
  },
  gemini(ms) {
    assert.equal(ms[0].role, "user", "the first content must be a user turn");
    ms.forEach((m, p) => {
      // (Parallel calls may be answered a turn each, as a history converted from OpenAI's
      // has them: the responses of a call turn are those of the response turns after it.)
      const responsesOnly = (x) => x && x.role === "user" && x.parts.length > 0 && x.parts.every((q) => q.functionResponse);
      if (m.parts.some((x) => x.functionResponse)) {
        let prev = p - 1;
        while (prev >= 0 && responsesOnly(ms[prev])) prev--;
        assert.ok(prev >= 0 && ms[prev].parts.some((x) => x.functionCall), "a functionResponse turn must answer the functionCall turn before it");
      }
      const calls = m.parts.filter((x) => x.functionCall);
      if (calls.length) {
        const prev = ms[p - 1];
        assert.ok(prev && prev.role === "user", "a functionCall turn must follow a user or functionResponse turn");
        const next = ms[p + 1];
        assert.ok(next, "a functionCall turn needs its functionResponse turn");
        const responses = [];
        for (let q = p + 1; q === p + 1 || responsesOnly(ms[q]); q++) responses.push(...ms[q].parts.filter((x) => x.functionResponse));
        assert.deepEqual(responses.map((x) => x.functionResponse.name).sort(),
          calls.map((x) => x.functionCall.name).sort(), "functionResponse parts must match the calls by name and order");
      }
    });
  },
  langchain(ms) {
    const calls = [], results = [];
    ms.forEach((m, p) => {
      for (const c of m.tool_calls ?? []) calls.push([p, c.id]);
      if (lcType(m) === "tool") results.push([p, m.tool_call_id]);
    });
    assertPairedById(calls, results, "langchain");
  },
};

export function isRealUser(format, m) {
  switch (format) {
    case "anthropic": return m.role === "user" && (typeof m.content === "string" || m.content.some((b) => b.type !== "tool_result"));
    case "gemini": return m.role === "user" && m.parts.some((p) => !p.functionResponse);
    case "openai-responses": return m.role === "user";
    case "langchain": return lcType(m) === "human";
    default: return m.role === "user";
  }
}


/** Whether a message carries a cache breakpoint (`cacheBreakpoints`), in any format that
 * takes them: `cache_control` on a block, `providerOptions` / a part's `providerMetadata`. */
export function hasCacheMark(m) {
  const mark = (x) => x !== null && typeof x === "object" &&
    (x.cache_control != null || x.providerOptions?.anthropic?.cacheControl != null || x.providerMetadata?.anthropic?.cacheControl != null);
  const content = m.content ?? m.parts ?? m.kwargs?.content ?? m.data?.content;
  return mark(m) || (Array.isArray(content) && content.some(mark));
}
