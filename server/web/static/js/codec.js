// The wire codec of protocol/PROTOCOL.md. msgpack by the vendored @msgpack/msgpack
// (loaded by index.html as the global `MessagePack`), then the decoding rules of
// sections 1, 2 and 12 and the message tables of schema.js. decodeServer() is what the page calls
// on every frame; encode() writes a request in the document's key order.
//
// A failure throws ProtocolError with `code` (section 10: malformed, too_large,
// bad_message, unknown_type) and `path` (the field at fault, e.g. `seats[2].bet`).

import { CHECKS } from "./checks.js";
import { CLIENT, LIMITS, RESULTS, SERVER, STRUCTS } from "./schema.js";

const { Decoder, Encoder, ExtData } = globalThis.MessagePack;

export class ProtocolError extends Error {
  constructor(code, message, path = null) {
    super(path ? `${path}: ${message}` : message);
    this.code = code;
    this.path = path;
  }
}

const fatalUtf8 = new TextDecoder("utf-8", { fatal: true });
const utf8 = new TextEncoder();

// A float on the wire, kept apart from integers: `100.0` is not an integer (section 2),
// but JavaScript has one number type, so the decoder marks floats as they are read.
class WireFloat {
  constructor(value) {
    this.value = value;
  }
}

// The library is lenient where the protocol is strict: it would decode invalid UTF-8
// and read floats as plain numbers. These two overrides of its (pinned) decoder fix
// that; bin and ext values are refused by its own options (maximum length 0) and any
// empty one left is refused by the walk below.
class StrictDecoder extends Decoder {
  decodeUtf8String(byteLength, headerOffset) {
    const start = this.pos + headerOffset;
    if (start + byteLength <= this.bytes.byteLength) {
      try {
        fatalUtf8.decode(this.bytes.subarray(start, start + byteLength));
      } catch {
        throw new ProtocolError("malformed", "a string is not valid UTF-8");
      }
    }
    return super.decodeUtf8String(byteLength, headerOffset);
  }

  readF32() {
    return new WireFloat(super.readF32());
  }

  readF64() {
    return new WireFloat(super.readF64());
  }
}

const decoder = new StrictDecoder({
  maxBinLength: 0,
  maxExtLength: 0,
  mapKeyConverter(key) {
    if (typeof key !== "string") throw new ProtocolError("malformed", "map keys must be strings");
    return key;
  },
});
const encoder = new Encoder({ ignoreUndefined: true });

// Section 12's size limits, checked over the whole frame, unknown keys included.
function walk(value, depth) {
  if (value === null || typeof value === "boolean" || typeof value === "number") return;
  if (typeof value === "string") {
    if (value.length * 3 > LIMITS.strBytes && utf8.encode(value).length > LIMITS.strBytes) {
      throw new ProtocolError("too_large", `a string is over ${LIMITS.strBytes} bytes`);
    }
    return;
  }
  if (value instanceof WireFloat) return;
  if (value instanceof Uint8Array || value instanceof ExtData || value instanceof Date) {
    throw new ProtocolError("malformed", "bin and ext values are not part of the protocol");
  }
  if (depth > LIMITS.depth) throw new ProtocolError("too_large", `nested over ${LIMITS.depth} levels`);
  if (Array.isArray(value)) {
    if (value.length > LIMITS.array) throw new ProtocolError("too_large", "an array is over 256 items");
    for (const item of value) walk(item, depth + 1);
    return;
  }
  const keys = Object.keys(value);
  if (keys.length > LIMITS.map) throw new ProtocolError("too_large", "a map is over 64 pairs");
  for (const key of keys) walk(value[key], depth + 1);
}

function typeName(v) {
  if (v === null) return "nil";
  if (v instanceof WireFloat) return "float";
  if (Array.isArray(v)) return "array";
  if (typeof v === "object") return "map";
  return { number: "int", string: "str", boolean: "bool" }[typeof v] ?? typeof v;
}

const bad = (path, message) => new ProtocolError("bad_message", message, path);
const wrongType = (path, want, v) => bad(path, `expected ${want}, got ${typeName(v)}`);
const HEX = /^[0-9a-f]*$/;

function check(spec, v, path) {
  switch (spec.t) {
    case "nil":
      return v === null ? null : check(spec.inner, v, path);
    case "int":
      if (typeof v !== "number" || !Number.isInteger(v)) throw wrongType(path, "int", v);
      if (v < spec.lo || v > spec.hi) throw bad(path, `${v} is not in ${spec.lo}..${spec.hi}`);
      return v;
    case "bool":
      if (typeof v !== "boolean") throw wrongType(path, "bool", v);
      return v;
    case "str": {
      if (typeof v !== "string") throw wrongType(path, "str", v);
      const n = [...v].length; // code points
      if (n < spec.lo || n > spec.hi) throw bad(path, `length ${n} is not in ${spec.lo}..${spec.hi}`);
      return v;
    }
    case "hex":
      if (typeof v !== "string") throw wrongType(path, "str", v);
      if (v.length !== spec.len || !HEX.test(v)) throw bad(path, `not ${spec.len} lowercase hex digits`);
      return v;
    case "enum":
      if (typeof v !== "string") throw wrongType(path, "str", v);
      if (!spec.values.includes(v)) throw bad(path, `${JSON.stringify(v.slice(0, 32))} is not one of ${spec.values}`);
      return v;
    case "arr": {
      if (!Array.isArray(v)) throw wrongType(path, "array", v);
      const okLen = spec.lens ? spec.lens.includes(v.length) : v.length >= spec.lo && v.length <= spec.hi;
      if (!okLen) throw bad(path, `${v.length} items, not ${spec.lens ? spec.lens.join(" or ") : `${spec.lo}..${spec.hi}`}`);
      const out = v.map((item, i) => check(spec.item, item, `${path}[${i}]`));
      if (spec.unique && new Set(out).size !== out.length) throw bad(path, "an item appears twice");
      return out;
    }
    case "struct":
      return fields(STRUCTS[spec.name], v, path);
    case "result": {
      if (!isMap(v)) throw wrongType(path, "map", v);
      const table = typeof v.kind === "string" ? RESULTS[v.kind] : undefined;
      if (!Object.hasOwn(v, "kind")) throw bad(`${path}.kind`, "missing");
      if (!table) throw bad(`${path}.kind`, "unknown result kind");
      return { kind: v.kind, ...fields(table, v, path) };
    }
    default:
      throw new Error(`schema: unknown spec ${spec.t}`);
  }
}

const isMap = (v) => v !== null && typeof v === "object" && !Array.isArray(v) && !(v instanceof WireFloat);

// A map's known fields, checked, defaults filled in; unknown keys are dropped.
function fields(table, m, path) {
  if (!isMap(m)) throw wrongType(path, "map", m);
  const out = {};
  for (const [name, spec, ...dflt] of table) {
    const at = path ? `${path}.${name}` : name;
    if (!Object.hasOwn(m, name)) {
      if (!dflt.length) throw bad(at, "missing");
      out[name] = structuredClone(dflt[0]);
    } else {
      out[name] = check(spec, m[name], at);
    }
  }
  return out;
}

function decodeWith(bytes, maxBytes, mine, other) {
  if (bytes.byteLength > maxBytes) throw new ProtocolError("too_large", `frame over ${maxBytes} bytes`);
  let m;
  try {
    m = decoder.decode(bytes);
  } catch (exc) {
    if (exc instanceof ProtocolError) throw exc;
    throw new ProtocolError("malformed", `not valid msgpack: ${exc.message}`);
  }
  if (!isMap(m)) throw new ProtocolError("malformed", `a frame holds one map, not ${typeName(m)}`);
  walk(m, 1);
  if (!Object.hasOwn(m, "type")) throw bad("type", "missing");
  if (typeof m.type !== "string") throw wrongType("type", "str", m.type);
  const table = Object.hasOwn(mine, m.type) ? mine[m.type] : null;
  if (!table) {
    const where = Object.hasOwn(other, m.type) ? "this side accepts" : "of this protocol";
    throw new ProtocolError("unknown_type", `${JSON.stringify(m.type.slice(0, 32))} is not a message ${where}`);
  }
  const message = { type: m.type, ...fields(table, m, "") };
  const rule = CHECKS[m.type]?.(message);
  if (rule) throw bad(rule[0], rule[1]);
  return message;
}

/** A server-to-client message from one binary frame (section 16's decode_server). */
export function decodeServer(bytes) {
  return decodeWith(bytes, LIMITS.serverFrame, SERVER, CLIENT);
}

/** A client-to-server message from one binary frame (the server's side, for the vectors). */
export function decodeClient(bytes) {
  return decodeWith(bytes, LIMITS.clientFrame, CLIENT, SERVER);
}

function ordered(table, m) {
  const out = {};
  for (const [name, spec, ...dflt] of table) {
    let v = Object.hasOwn(m, name) ? m[name] : dflt.length ? dflt[0] : undefined;
    if (v === undefined) throw new ProtocolError("bad_message", "missing", name);
    if (v !== null && spec.t === "result") v = { kind: v.kind, ...ordered(RESULTS[v.kind], v) };
    else if (v !== null && (spec.t === "struct" || spec.inner?.t === "struct")) {
      v = ordered(STRUCTS[(spec.inner ?? spec).name], v);
    } else if (Array.isArray(v) && spec.item?.t === "struct") v = v.map((x) => ordered(STRUCTS[spec.item.name], x));
    out[name] = v;
  }
  return out;
}

/** The frame of a message of either direction, keys in the document's order, every
 * field written (absent optional ones with their default). */
export function encode(message) {
  const table = CLIENT[message.type] ?? SERVER[message.type];
  if (!table) throw new ProtocolError("unknown_type", `unknown message type ${message.type}`);
  const bytes = encoder.encode({ type: message.type, ...ordered(table, message) });
  // Checked as the peer will read it: a request that breaks the schema is never sent.
  (CLIENT[message.type] ? decodeClient : decodeServer)(bytes);
  return bytes;
}
