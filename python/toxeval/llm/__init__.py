"""LLM and moderation-endpoint runner: requests, answers, client, run files."""
