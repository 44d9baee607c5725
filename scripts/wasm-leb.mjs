// The unsigned LEB128 numbers of the wasm binary format, read by the build's and the size
// tools' walks over a module's sections (scripts/order-functions.mjs, scripts/wasm-sizes.mjs).

/** An unsigned LEB128 of `b` at `p`: `[value, the position after it]`. */
export function leb(b, p) {
  let value = 0, shift = 0, byte;
  do {
    byte = b[p++];
    value += (byte & 0x7f) * 2 ** shift;
    shift += 7;
  } while (byte & 0x80);
  return [value, p];
}
