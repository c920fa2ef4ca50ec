-- pgvector must exist before any vector column is created.
CREATE EXTENSION IF NOT EXISTS vector;
