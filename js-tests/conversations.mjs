// The same conversation in every chat format of SPEC §2: parallel tool calls, interleaved
// text and images (shared by the format, payload and orphan tests).
import { HumanMessage, AIMessage, ToolMessage, SystemMessage } from "@langchain/core/messages";

export const TURNS = 8;
export const bulky = (t) => JSON.stringify({ turn: t, rows: Array.from({ length: 12 }, (_, k) => ({ k, v: `value ${t}-${k}` })) });
export const IMAGE_B64 = "iVBORw0KGgo=";

export const build = {
  openai() {
    const m = [{ role: "system", content: "Be brief." }];
    for (let t = 0; t < TURNS; t++) {
      m.push(t % 3 === 0
        ? { role: "user", content: [{ type: "text", text: `Look at picture ${t}` }, { type: "image_url", image_url: { url: `data:image/png;base64,${IMAGE_B64}` } }] }
        : { role: "user", content: `Question ${t}?` });
      m.push({ role: "assistant", content: `Checking ${t}.`, tool_calls: [
        { id: `a${t}`, type: "function", function: { name: "search", arguments: JSON.stringify({ q: t }) } },
        { id: `b${t}`, type: "function", function: { name: "fetch", arguments: "{}" } }] });
      m.push({ role: "tool", tool_call_id: `a${t}`, content: bulky(t) });
      m.push({ role: "tool", tool_call_id: `b${t}`, content: "fetched" });
      m.push({ role: "assistant", content: `Answer ${t}.` });
    }
    return m;
  },
  "openai-responses"() {
    const m = [{ type: "message", role: "developer", content: [{ type: "input_text", text: "Be brief." }] }];
    for (let t = 0; t < TURNS; t++) {
      m.push({ type: "message", role: "user", content: t % 3 === 0
        ? [{ type: "input_text", text: `Look at picture ${t}` }, { type: "input_image", image_url: `data:image/png;base64,${IMAGE_B64}` }]
        : [{ type: "input_text", text: `Question ${t}?` }] });
      m.push({ type: "reasoning", id: `rs_${t}`, summary: [{ type: "summary_text", text: `I should search for ${t}.` }] });
      m.push({ type: "function_call", call_id: `a${t}`, name: "search", arguments: JSON.stringify({ q: t }) });
      m.push({ type: "function_call", call_id: `b${t}`, name: "fetch", arguments: "{}" });
      m.push({ type: "function_call_output", call_id: `a${t}`, output: bulky(t) });
      m.push({ type: "function_call_output", call_id: `b${t}`, output: "fetched" });
      m.push({ type: "message", role: "assistant", content: [{ type: "output_text", text: `Answer ${t}.` }] });
    }
    return m;
  },
  anthropic() {
    const m = [];
    for (let t = 0; t < TURNS; t++) {
      m.push({ role: "user", content: t % 3 === 0
        ? [{ type: "text", text: `Look at picture ${t}` }, { type: "image", source: { type: "base64", media_type: "image/png", data: IMAGE_B64 } }]
        : `Question ${t}?` });
      m.push({ role: "assistant", content: [
        { type: "thinking", thinking: `Plan for ${t}`, signature: "sig" },
        { type: "text", text: `Checking ${t}.` },
        { type: "tool_use", id: `a${t}`, name: "search", input: { q: t } },
        { type: "tool_use", id: `b${t}`, name: "fetch", input: {} }] });
      m.push({ role: "user", content: [
        { type: "tool_result", tool_use_id: `a${t}`, content: bulky(t) },
        { type: "tool_result", tool_use_id: `b${t}`, content: [{ type: "text", text: "fetched" }] }] });
      m.push({ role: "assistant", content: `Answer ${t}.` });
    }
    return m;
  },
  vercel() {
    const m = [{ role: "system", content: "Be brief." }];
    for (let t = 0; t < TURNS; t++) {
      m.push({ role: "user", content: t % 3 === 0
        ? [{ type: "text", text: `Look at picture ${t}` }, { type: "image", image: IMAGE_B64, mediaType: "image/png" }]
        : `Question ${t}?` });
      m.push({ role: "assistant", content: [
        { type: "text", text: `Checking ${t}.` },
        { type: "tool-call", toolCallId: `a${t}`, toolName: "search", input: { q: t } },
        { type: "tool-call", toolCallId: `b${t}`, toolName: "delete", input: {} },
        { type: "tool-approval-request", approvalId: `ap${t}`, toolCallId: `b${t}` }] });
      m.push({ role: "tool", content: [
        { type: "tool-result", toolCallId: `a${t}`, toolName: "search", output: { type: "json", value: JSON.parse(bulky(t)) } },
        { type: "tool-approval-response", approvalId: `ap${t}`, approved: true }] });
      m.push({ role: "tool", content: [{ type: "tool-result", toolCallId: `b${t}`, toolName: "delete", output: { type: "text", value: "deleted" } }] });
      m.push({ role: "assistant", content: [{ type: "text", text: `Answer ${t}.` }] });
    }
    return m;
  },
  "vercel-ui"() {
    const m = [{ id: "s", role: "system", parts: [{ type: "text", text: "Be brief." }] }];
    for (let t = 0; t < TURNS; t++) {
      m.push({ id: `u${t}`, role: "user", parts: t % 3 === 0
        ? [{ type: "text", text: `Look at picture ${t}` }, { type: "file", mediaType: "image/png", url: `data:image/png;base64,${IMAGE_B64}` }]
        : [{ type: "text", text: `Question ${t}?` }] });
      m.push({ id: `a${t}`, role: "assistant", parts: [
        { type: "step-start" },
        { type: "text", text: `Checking ${t}.` },
        { type: "tool-search", toolCallId: `a${t}`, state: "output-available", input: { q: t }, output: JSON.parse(bulky(t)) },
        { type: "dynamic-tool", toolName: "fetch", toolCallId: `b${t}`, state: "output-available", input: {}, output: "fetched" },
        { type: "text", text: `Answer ${t}.` }] });
    }
    return m;
  },
  gemini() {
    const m = [];
    for (let t = 0; t < TURNS; t++) {
      m.push({ role: "user", parts: t % 3 === 0
        ? [{ text: `Look at picture ${t}` }, { inlineData: { mimeType: "image/png", data: IMAGE_B64 } }]
        : [{ text: `Question ${t}?` }] });
      // No ids: responses match by name and order.
      m.push({ role: "model", parts: [{ functionCall: { name: "search", args: { q: t } } }, { functionCall: { name: "fetch", args: {} } }] });
      m.push({ role: "user", parts: [
        { functionResponse: { name: "search", response: JSON.parse(bulky(t)) } },
        { functionResponse: { name: "fetch", response: { ok: true } } }] });
      m.push({ role: "model", parts: [{ text: `Answer ${t}.` }] });
    }
    return m;
  },
  langchain() {
    const m = [new SystemMessage("Be brief.")];
    for (let t = 0; t < TURNS; t++) {
      m.push(t % 3 === 0
        ? new HumanMessage({ content: [{ type: "text", text: `Look at picture ${t}` }, { type: "image_url", image_url: { url: `data:image/png;base64,${IMAGE_B64}` } }] })
        : new HumanMessage(`Question ${t}?`));
      m.push(new AIMessage({ content: `Checking ${t}.`, tool_calls: [
        { id: `a${t}`, name: "search", args: { q: t } },
        { id: `b${t}`, name: "fetch", args: {} }] }));
      m.push(new ToolMessage({ tool_call_id: `a${t}`, content: bulky(t) }));
      m.push(new ToolMessage({ tool_call_id: `b${t}`, content: "fetched" }));
      m.push(new AIMessage(`Answer ${t}.`));
    }
    return m;
  },
};
