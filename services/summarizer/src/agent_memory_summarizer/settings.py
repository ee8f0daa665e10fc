"""Summarizer settings: ``AGENT_MEMORY_SUMMARIZER__*`` plus the common ones.

The LLM endpoint is off unless ``AGENT_MEMORY_SUMMARIZER__LLM__BASE_URL`` is set; the default,
extractive summarizer needs no model and no network.
"""

from __future__ import annotations

from pydantic import BaseModel, Field, SecretStr

from agent_memory_common.core.settings import CommonSettings


class LlmOptions(BaseModel):
    """An OpenAI-compatible chat completions endpoint (OpenAI, vLLM, Ollama, llama.cpp...)."""

    base_url: str = Field(
        default="", description="e.g. http://127.0.0.1:11434/v1 (empty: extractive only)."
    )
    model: str = Field(default="", description="Model name sent in the request.")
    api_key: SecretStr = Field(default=SecretStr(""), description="Bearer key, if required.")
    timeout_s: float = Field(
        default=15.0,
        gt=0,
        description="Per request; then extractive. Keep it under 2/3 of the consumer's ack wait "
        "(30 s), or a slow call gets its segment redelivered to another replica meanwhile.",
    )
    max_tokens: int = Field(default=700, ge=64, description="Completion tokens per segment.")
    project_tokens_per_day: int = Field(
        default=200_000,
        ge=0,
        description="Budget per project and UTC day (prompt + completion); then extractive.",
    )
    max_prompt_chars: int = Field(default=24_000, ge=1_000, description="Segment text sent.")

    @property
    def enabled(self) -> bool:
        return bool(self.base_url.strip() and self.model.strip())


class SummarizerOptions(BaseModel):
    batch_size: int = Field(
        default=32,
        ge=1,
        le=1000,
        description="Segments per transaction; lowered with an LLM so a batch ends in time.",
    )
    pool_size: int = Field(default=2, ge=1)
    llm: LlmOptions = LlmOptions()


class Settings(CommonSettings):
    summarizer: SummarizerOptions = SummarizerOptions()
