import { strict as assert } from "node:assert";
import { test } from "node:test";

import { editArguments, initializationOptions, serverCommand } from "../helpers";

test("an empty selection edits the whole file", () => {
  const args = editArguments("file:///w/a.py", { startLine: 3, endLine: 3, isEmpty: true }, "  add types ");
  assert.deepEqual(args, { uri: "file:///w/a.py", instruction: "add types" });
});

test("a selection becomes a line range", () => {
  const args = editArguments("file:///w/a.py", { startLine: 2, endLine: 5, isEmpty: false }, "rename");
  assert.deepEqual(args.range, { start: { line: 2, character: 0 }, end: { line: 5, character: 0 } });
});

test("the server runs as `deepacp lsp` and asks for annotated review", () => {
  const settings = { command: "", model: "openai:gpt-5.1", shell: "deny" as const };
  assert.deepEqual(serverCommand(settings), { command: "deepacp", args: ["lsp"] });
  assert.deepEqual(initializationOptions(settings), { shell: "deny", review: "annotated", model: "openai:gpt-5.1" });
  assert.equal("model" in initializationOptions({ ...settings, model: null }), false);
});
