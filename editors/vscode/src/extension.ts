import * as vscode from "vscode";
import { LanguageClient, LanguageClientOptions, ServerOptions } from "vscode-languageclient/node";

import { EditResult, editArguments, initializationOptions, serverCommand, Settings } from "./helpers";

let client: LanguageClient | undefined;
let lastProposal: string | null = null;

function settings(): Settings {
  const config = vscode.workspace.getConfiguration("deepacp");
  return {
    command: config.get<string>("command", "deepacp"),
    model: config.get<string | null>("model", null),
    shell: config.get<"ask" | "allow" | "deny">("shell", "ask"),
  };
}

async function execute(command: string, args: unknown[]): Promise<unknown> {
  if (!client) {
    throw new Error("the deepacp language server is not running");
  }
  return client.sendRequest("workspace/executeCommand", { command, arguments: args });
}

async function editSelection(): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    return;
  }
  const instruction = await vscode.window.showInputBox({ prompt: "What should deepacp change?" });
  if (!instruction) {
    return;
  }
  const selection = editor.selection;
  const args = editArguments(
    editor.document.uri.toString(),
    { startLine: selection.start.line, endLine: selection.end.line, isEmpty: selection.isEmpty },
    instruction,
  );
  const result = (await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: "deepacp", cancellable: true },
    (_progress, token) => {
      token.onCancellationRequested(() => void execute("deepacp.cancel", []));
      return execute("deepacp.edit", [args]);
    },
  )) as EditResult;
  lastProposal = result?.proposal ?? null; // the server has told the user how it went
}

async function reviewProposal(): Promise<void> {
  if (!lastProposal) {
    vscode.window.showInformationMessage("deepacp: no proposal to review");
    return;
  }
  await execute("deepacp.review", [lastProposal]);
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const current = settings();
  const server = serverCommand(current);
  const serverOptions: ServerOptions = { command: server.command, args: server.args };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: "file" }],
    initializationOptions: initializationOptions(current),
  };
  client = new LanguageClient("deepacp", "deepacp", serverOptions, clientOptions);
  context.subscriptions.push(
    vscode.commands.registerCommand("deepacp.editSelection", editSelection),
    vscode.commands.registerCommand("deepacp.reviewProposal", reviewProposal),
    vscode.commands.registerCommand("deepacp.cancelEdit", () => execute("deepacp.cancel", [])),
  );
  await client.start();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
