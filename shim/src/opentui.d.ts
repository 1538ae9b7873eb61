// The parts of OpenCode's TUI libraries the TUI entry (tui.ts) uses,
// declared here: OpenCode hands a TUI plugin its own copies of
// `@opentui/solid` (0.4.5 on 1.18.33) and `solid-js` (1.9.12), so the
// package neither ships nor installs them (the bundle keeps them
// external).
declare module "@opentui/solid" {
  export function createElement(tag: string): unknown;
  export function insert(parent: unknown, accessor: unknown, marker?: unknown): unknown;
  export function setProp(node: unknown, name: string, value: unknown, prev?: unknown): unknown;
}
declare module "solid-js" {
  export function onCleanup(fn: () => void): void;
}
