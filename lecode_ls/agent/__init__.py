"""The chat agent: the provider interface, its OpenAI-compatible adapter and the model catalog."""
