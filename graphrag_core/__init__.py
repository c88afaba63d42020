"""GraphRAG global search: map-reduce over community summaries, with provenance."""
