"""What every layer shares and nothing else: the vocabulary, the errors, privacy, the
escaping of outside text, and the domain types the engine, the store and the adapters pass
between them. It imports nothing of ozlab."""
