"""lecode's own chat (other agents' hooks and transcripts are `other_agents/`): the provider
interface and its OpenAI-compatible adapter (provider, openai, sse, credentials), the model
catalog and the window a request must fit (catalog, server_window, preflight), a turn (runner,
turn_memory, replay, diagnosis), compaction (compaction, summary_check, language), automatic
learning (learning and its learning_* modules) and embeddings for semantic ranking."""
