// Typings of the package's own JavaScript exports, ReduceError (src/wasm/js/common.js) and
// reloadTool (src/wasm/js/offload.js), which the package re-exports (wasm-bindgen's
// `reexport` declares them only as `unknown`; the package's index.d.ts exports these).
import type { ErrorCode } from "./chat_history_reducer.js";

/**
 * Thrown by every function of this package for bad input or a failed reduction. The
 * module stays usable afterwards.
 *
 * ```javascript
 * try { reduceSync(history, { maxTokens: -1 }); }
 * catch (e) { if (e instanceof ReduceError) console.log(e.code, e.field); } // INVALID_CONFIG maxTokens
 * ```
 */
export class ReduceError extends Error {
  constructor(code: ErrorCode, message: string, index?: number, field?: string);
  readonly name: "ReduceError";
  /** What went wrong. */
  code: ErrorCode;
  /** The input message at fault (`INVALID_MESSAGE`). */
  index?: number;
  /** The config option at fault (`INVALID_CONFIG`). */
  field?: string;
}


/**
 * The `context_reload` tool: lets the model ask for an offloaded message back.
 *
 * ```javascript
 * // OpenAI:     tools: [{ type: "function", function: reloadTool }]
 * // Anthropic:  tools: [{ name: reloadTool.name, description: reloadTool.description, input_schema: reloadTool.parameters }]
 * // AI SDK:     tools: { [reloadTool.name]: tool({ description: reloadTool.description, inputSchema: jsonSchema(reloadTool.parameters), execute: ({ id }) => history.reload(id) }) }
 * ```
 */
export const reloadTool: {
  readonly name: "context_reload";
  readonly description: string;
  /** Its JSON Schema, as it is: `type: "object"` (which Anthropic's `input_schema` requires),
   * and `required` a plain array (as OpenAI's, Anthropic's and JSON Schema 7's types have
   * it; frozen at run time, as the whole object is). */
  readonly parameters: {
    readonly type: "object";
    readonly properties: { readonly id: { readonly type: "string"; readonly description: string } };
    readonly required: ["id"];
    readonly additionalProperties: false;
  };
};
