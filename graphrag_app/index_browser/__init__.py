"""index_browser."""
