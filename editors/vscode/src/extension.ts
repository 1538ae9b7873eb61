// The wiring, and the only module that imports vscode: activate hands the
// real API to App (app.ts), which the tests drive with a fake one.
import * as vscode from "vscode";
import { activateWith, type App } from "./app.js";
import type { Host } from "./host.js";

let app: App | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const host: Host = vscode;
  app = activateWith(host, context);
}

export function deactivate(): Promise<void> | undefined {
  const a = app;
  app = undefined;
  return a?.dispose();
}
