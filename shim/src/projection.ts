// The slim copy of OpenCode's message history sent with
// chat.messages.transform (PROTOCOL.md 4.5). Only the fields the sidecar
// reads are copied; tool outputs and file contents, most of the bytes, stay
// behind, and so does a reasoning part's text (the sidecar reads no part's
// text whose type is "reasoning": a model's thinking can be as long as its
// answers). Array positions are kept one for one, so a patch path such as
// /messages/4/parts/2/state/error points at the same place in the real history.

export type ProjectedPart = {
  type?: string;
  text?: string;
  synthetic?: boolean;
  tool?: string;
  callID?: string;
  state?: { status?: string; error?: string };
};

export type ProjectedMessage = {
  info: { id?: string; role?: string; agent?: string; sessionID?: string };
  parts: ProjectedPart[];
};

/** v when it is a string, else undefined. */
export function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

/** v when it is a plain object (not null, not an array), else undefined. */
export function record(v: unknown): Record<string, unknown> | undefined {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

/** Whether the sidecar reads the text of a part of this type (PROTOCOL.md 4.5): not a reasoning part's. */
export function textRead(type: unknown): boolean {
  return type !== "reasoning";
}

export function projectPart(raw: unknown): ProjectedPart {
  const p = record(raw);
  if (!p) return {};
  const out: ProjectedPart = {};
  const type = str(p.type);
  if (type !== undefined) out.type = type;
  const text = textRead(type) ? str(p.text) : undefined;
  if (text !== undefined) out.text = text;
  if (typeof p.synthetic === "boolean") out.synthetic = p.synthetic;
  const tool = str(p.tool);
  if (tool !== undefined) out.tool = tool;
  const callID = str(p.callID);
  if (callID !== undefined) out.callID = callID;
  const state = record(p.state);
  if (state) {
    const s: { status?: string; error?: string } = {};
    const status = str(state.status);
    if (status !== undefined) s.status = status;
    const error = str(state.error);
    if (error !== undefined) s.error = error;
    out.state = s;
  }
  return out;
}

export function projectMessage(raw: unknown): ProjectedMessage {
  const m = record(raw);
  const info = record(m?.info);
  const out: ProjectedMessage = { info: {}, parts: [] };
  if (info) {
    const id = str(info.id);
    if (id !== undefined) out.info.id = id;
    const role = str(info.role);
    if (role !== undefined) out.info.role = role;
    const agent = str(info.agent);
    if (agent !== undefined) out.info.agent = agent;
    const sessionID = str(info.sessionID);
    if (sessionID !== undefined) out.info.sessionID = sessionID;
  }
  if (Array.isArray(m?.parts)) out.parts = (m.parts as unknown[]).map(projectPart);
  return out;
}

/**
 * Projects output {messages} to the fields of PROTOCOL.md 4.5. Returns
 * undefined when output has no messages array. The result holds only strings
 * and booleans, so it always serialises.
 */
export function projectMessages(output: unknown): { messages: ProjectedMessage[] } | undefined {
  const o = record(output);
  if (!o || !Array.isArray(o.messages)) return undefined;
  return { messages: (o.messages as unknown[]).map(projectMessage) };
}
