/**
 * What the tool list may cost an agent on each surface: held by
 * test/integration/tool-list-fit.test.ts on what the worker serves, and measured (with the room
 * left) by `npm run bench -- tool-list` (docs/add-a-tool.md, "The budgets").
 */
export const TOOL_LIST_BUDGETS = {
  /** o200k_base tokens of all of tools/list. */
  allTokens: 9_000,
  /** Tokens of tools/list at /mcp/study. */
  studyTokens: 4_500,
  /** Bytes of JSON of each toolset's tools/list. */
  toolsetBytes: 20 * 1024,
  /** Tokens of the OpenAI export of all tools. */
  openAiTokens: 4_500,
  /** Tokens of tools/list at /mcp/code. */
  codeTokens: 1_500,
} as const;
