// `chat-history-reducer/web` and the root, resolved without "exports" (tsconfig.node10.json).
import init, { reduceSync } from "chat-history-reducer/web";
import type { Message, ReduceResult } from "chat-history-reducer";

export async function main(): Promise<void> {
  await init();
  const messages: Message[] = [{ role: "user", content: "hi" }];
  const r: ReduceResult = reduceSync(messages, { maxTokens: 100 });
  console.log(r.messages.length);
}
