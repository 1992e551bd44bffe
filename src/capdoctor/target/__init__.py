"""What a diagnosis points at: provider, base URL, model and key, from flags, files, env and clients' settings."""
