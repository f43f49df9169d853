"""Reader adapters: a plain callable, a LangChain chat model, a LlamaIndex LLM."""

from __future__ import annotations

import pytest

from ctxassembly.errors import ConfigError
from ctxassembly.eval import SmolLM2Reader, as_reader
from ctxassembly.llm.readers import SMOLLM2_CACHE_ENV


@pytest.mark.unit
def test_plain_callable() -> None:
    reader = as_reader(lambda p: f"len={len(p)}")
    assert reader("abc") == "len=3"


@pytest.mark.unit
def test_callable_returning_a_non_string_is_an_error() -> None:
    reader = as_reader(lambda p: 42)
    with pytest.raises(ConfigError, match="reader callable returned int, expected a string"):
        reader("x")


@pytest.mark.unit
def test_not_a_reader() -> None:
    with pytest.raises(ConfigError, match=r"reader must be a callable prompt -> str.*got int"):
        as_reader(3)


@pytest.mark.integration
def test_langchain_chat_model() -> None:
    # FakeListChatModel stands in for a remote chat model (no API here); the adapter
    # goes through its real invoke() and reads the AIMessage content.
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    model = FakeListChatModel(responses=["870,000 [doc-1]", "second"])
    reader = as_reader(model)
    assert reader("What is the count?") == "870,000 [doc-1]"
    assert reader("again") == "second"


@pytest.mark.integration
def test_langchain_content_blocks() -> None:
    from langchain_core.messages import AIMessage

    class BlockModel:  # a LangChain-shaped object whose reply has content blocks
        def invoke(self, prompt: str) -> AIMessage:
            return AIMessage(content=[{"type": "text", "text": "a"}, "b"])

    assert as_reader(BlockModel())("x") == "ab"


@pytest.mark.integration
def test_llamaindex_llm() -> None:
    # MockLLM stands in for a remote LLM (no API here); with no max_tokens it echoes the
    # prompt through its real complete() -> CompletionResponse.
    from llama_index.core.llms import MockLLM

    reader = as_reader(MockLLM())
    assert reader("the prompt text") == "the prompt text"
    assert "LlamaIndexReader(MockLLM)" in repr(reader)


@pytest.mark.unit
@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"max_new_tokens": 0}, "max_new_tokens must be a positive int, got 0"),
        ({"threads": 0}, "threads must be a positive int, got 0"),
        ({"max_new_tokens": True}, "max_new_tokens must be a positive int, got True"),
    ],
)
def test_smollm2_options_are_checked(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        SmolLM2Reader(**kwargs)  # type: ignore[arg-type]


@pytest.mark.unit
def test_smollm2_cache_dir_from_env(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    monkeypatch.setenv(SMOLLM2_CACHE_ENV, str(tmp_path))
    assert str(SmolLM2Reader().cache_dir) == str(tmp_path)
    monkeypatch.delenv(SMOLLM2_CACHE_ENV)
    assert SmolLM2Reader().cache_dir.parts[-3:] == (".cache", "ctxassembly", "smollm2")
    assert SmolLM2Reader(cache_dir="/x").cache_dir.as_posix() == "/x"


@pytest.mark.unit
def test_smollm2_missing_gguf_path(tmp_path: object) -> None:
    reader = SmolLM2Reader(cache_dir=f"{tmp_path}/c", gguf_path=f"{tmp_path}/nope.gguf")
    with pytest.raises(ConfigError, match=r"nope\.gguf' is not a file"):
        reader.load()


@pytest.mark.unit
def test_smollm2_prompt_must_be_a_string() -> None:
    with pytest.raises(ConfigError, match="prompt must be a str, got bytes"):
        SmolLM2Reader()(b"x")  # type: ignore[arg-type]


@pytest.mark.unit
def test_smollm2_messages_with_system() -> None:
    assert SmolLM2Reader(system="Be brief.").messages("q") == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "q"},
    ]
