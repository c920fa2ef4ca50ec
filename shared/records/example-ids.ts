/**
 * The ids the tools' examples name (in their hints and catalog entries): a document and two of its
 * tasks, shared by the document and task-analysis tools. A project that holds records with these
 * ids runs every example as it is.
 */
export const EXAMPLE_IDS = {
  document: '3f2b8c1e-9d4a-4e7b-8c2f-1a2b3c4d5e6f',
  tasks: ['9a1c2e3f-4b5d-4e6f-8a7b-0c1d2e3f4a5b', '5d6e7f80-1a2b-4c3d-9e4f-a5b6c7d8e9f0'],
} as const;
