"""LLM clients behind one interface (Gemini, OpenAI-compatible); offline when none is configured."""
