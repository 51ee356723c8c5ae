"""A task's vocabulary as a Hugging Face tokenizer, saved beside every export so that
`AutoTokenizer.from_pretrained(folder)` turns the text of an example into our ids and back.

Our tasks tokenise by whitespace: every token is one word of the input written out (`[CLS] a = +
+1 , ... [SEP]`), and the id of a word is its place in the task's `Vocab`. That is a
`tokenizers` WordLevel model behind a whitespace pre-tokenizer, saved as the files of a
`PreTrainedTokenizerFast` (what `pipeline()` and `AutoTokenizer` load). The character-level
corpus (tasks/corpora.py), whose tokens are characters, spaces and newlines included, is
written out without separators and split into characters instead. There is no unknown token:
a word outside the vocabulary is an error, never a silent [UNK] (none of our tasks has one).
No post-processor adds [CLS] / [SEP]: the written-out input holds them already (the Parquet
`text` column, data_export.py), so the round trip is exact for every task, whatever its frame.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from reasonlab.errors import ConfigError

SPECIALS = {"pad_token": "[PAD]", "cls_token": "[CLS]", "sep_token": "[SEP]",
            "mask_token": "[MASK]"}
"""The tokenizer's special-token roles, each set where the task's vocabulary has the token."""


@functools.lru_cache(maxsize=8)
def by_characters(tokens: tuple[str, ...]) -> bool:
    """Whether the vocabulary is one of characters (some not whole words: a space, a newline),
    written out without separators; bracketed specials ([PAD]) aside."""
    plain = [t for t in tokens if not (t.startswith("[") and t.endswith("]") and len(t) > 2)]
    words = all(t and len(t.split()) == 1 and t == t.strip() for t in tokens)
    if not words and not all(len(t) == 1 for t in plain):
        raise ValueError("a vocabulary must be of whitespace-free words or of characters")
    return not words


def input_text(tokens: tuple[str, ...], ids: Any) -> str:
    """The words of a row of ids, padding (id 0) left out: the text the tokenizer maps back to
    exactly these ids."""
    sep = "" if by_characters(tokens) else " "
    return sep.join(tokens[int(i)] for i in ids if int(i) != 0)


def core(tokens: tuple[str, ...]) -> Any:
    """The `tokenizers` Tokenizer over `tokens` (id = index)."""
    try:
        from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers
    except ImportError:  # what an export is loaded with (transformers) brings it along
        raise ConfigError("exports carry the task's tokenizer, written with Hugging Face "
                          "tokenizers; install it with `pip install tokenizers` (it comes "
                          "with transformers and with `reasonlab[data]`)") from None

    vocab = {t: i for i, t in enumerate(tokens)}
    tok = Tokenizer(models.WordLevel(vocab=vocab))
    if by_characters(tokens):
        # one piece per character; `(?m)` is Oniguruma's dot-matches-newline (Python's `(?s)`)
        tok.pre_tokenizer = pre_tokenizers.Split(Regex("(?m)."), behavior="isolated")
        tok.decoder = decoders.Fuse()  # characters joined as they are, no spaces between
    else:
        tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    # marked special, so `decode(ids, skip_special_tokens=True)` and pipelines leave them out
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False)
                            for t in SPECIALS.values() if t in vocab])
    return tok


def save(tokens: tuple[str, ...], folder: Path, max_len: int | None = None) -> None:
    """tokenizer.json and tokenizer_config.json into `folder`: what
    `AutoTokenizer.from_pretrained(folder)` reads as a PreTrainedTokenizerFast. Written with
    `tokenizers` alone (no transformers needed to export)."""
    folder.mkdir(parents=True, exist_ok=True)
    core(tokens).save(str(folder / "tokenizer.json"))
    roles = {role: tok for role, tok in SPECIALS.items() if tok in tokens}
    config = {"tokenizer_class": "PreTrainedTokenizerFast", **roles,
              "clean_up_tokenization_spaces": False,
              **({"model_max_length": max_len} if max_len else {})}
    (folder / "tokenizer_config.json").write_text(json.dumps(config, indent=2) + "\n")


def special_ids(tokens: tuple[str, ...]) -> dict[str, int | None]:
    """pad / bos / eos ids of a model config for this vocabulary: [PAD], [CLS] and [SEP] where
    the task has them, else None (never transformers' defaults, such as GPT-2's 50256, which
    name no token of ours)."""
    index = {t: i for i, t in enumerate(tokens)}
    return {"pad_token_id": index.get("[PAD]"), "bos_token_id": index.get("[CLS]"),
            "eos_token_id": index.get("[SEP]")}
