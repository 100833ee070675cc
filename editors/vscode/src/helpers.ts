// Pure helpers, kept free of the vscode API so they can be unit tested with node --test.

export interface Selection {
  startLine: number; // 0-based
  endLine: number;
  isEmpty: boolean;
}

export interface EditArguments {
  uri: string;
  instruction: string;
  range?: { start: { line: number; character: number }; end: { line: number; character: number } };
}

export interface EditResult {
  cancelled?: boolean;
  proposal?: string | null;
  hunks?: number;
  summary?: string;
}

export interface Settings {
  command: string;
  model: string | null;
  shell: "ask" | "allow" | "deny";
}

/** The arguments of the server's deepacp.edit command for this selection. */
export function editArguments(uri: string, selection: Selection, instruction: string): EditArguments {
  const args: EditArguments = { uri, instruction: instruction.trim() };
  if (!selection.isEmpty) {
    args.range = {
      start: { line: selection.startLine, character: 0 },
      end: { line: selection.endLine, character: 0 },
    };
  }
  return args;
}

/** How to start the language server. */
export function serverCommand(settings: Settings): { command: string; args: string[] } {
  return { command: settings.command || "deepacp", args: ["lsp"] };
}

/** initializationOptions: VS Code shows annotated edits in its refactor preview. */
export function initializationOptions(settings: Settings): Record<string, string> {
  const options: Record<string, string> = { shell: settings.shell, review: "annotated" };
  if (settings.model) {
    options.model = settings.model;
  }
  return options;
}
