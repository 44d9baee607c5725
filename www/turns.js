// How the demo's ChatHistory replays a conversation: one turn at a time, as a chat app pushes
// a user input with what answered it, then calls prepare() before the next model call.
// Plain JavaScript: the page and the Node tests import it alike.

/**
 * The turns of a conversation whose messages are in `rounds` (analyze()'s `round` of each
 * message): `[start, end)` index ranges, one per round; the messages before the first user
 * input (the system prompt) open the first turn.
 */
export function turns(rounds) {
  const out = [];
  let start = 0;
  for (let k = 1; k < rounds.length; k++) {
    if (rounds[k] !== rounds[k - 1] && rounds[k - 1] > 0) {
      out.push([start, k]);
      start = k;
    }
  }
  if (rounds.length) out.push([start, rounds.length]);
  return out;
}

/** The end of the turn that message `next` is in (the whole turn when it opens one). */
export function turnEnd(rounds, next) {
  return turns(rounds).find(([, end]) => end > next)?.[1] ?? rounds.length;
}
