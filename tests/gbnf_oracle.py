"""Checks GBNF grammars with two implementations written elsewhere, for
tests/tests/schema/gbnf_oracle.rs.

Reads {"cases": [{"grammar": str, "accept": [str], "reject": [str]}]} on stdin and writes, per
oracle, per case: the grammar error (null when the grammar parses) and, for every text, whether
root matches all of it.

- `gbnf` (PyPI `gbnf`): a Python port of llama.cpp's own grammar parser and matcher.
- `llguidance` (PyPI `llguidance`): the grammar engine llama.cpp can be built with; GBNF is
  converted by its `gbnf_to_lark` and matched byte by byte over a byte-level vocabulary.
"""

import json
import sys

import llguidance
from gbnf import GBNF, GrammarParseError, InputParseError


def gbnf_oracle(case):
    try:
        start = GBNF(case["grammar"])
    except GrammarParseError as error:
        return {"grammar_error": str(error), "accept": [], "reject": []}

    def matches(text):
        try:
            state = start.add(text)
        except InputParseError:
            return False
        except IndexError:
            # gbnf 0.0.32 can fail while building the message of its InputParseError (a
            # multi-line input refused on its last line): the input was refused all the same.
            return False
        return any(type(rule).__name__ == "RuleEnd" for rule in state)

    return {
        "grammar_error": None,
        "accept": [matches(text) for text in case["accept"]],
        "reject": [matches(text) for text in case["reject"]],
    }


class Bytes:
    """A vocabulary of the 256 bytes and an end-of-sequence token."""

    eos_token_id = 256
    bos_token_id = None
    tokens = [bytes([byte]) for byte in range(256)] + [b"<eos>"]
    special_token_ids = [256]

    def __call__(self, text):
        return list(text.encode("utf-8") if isinstance(text, str) else text)


TOKENIZER = llguidance.LLTokenizer(llguidance.TokenizerWrapper(Bytes()))


def llguidance_oracle(case):
    try:
        grammar = llguidance.grammar_from("gbnf", case["grammar"])
    except ValueError as error:
        return {"grammar_error": str(error), "accept": [], "reject": []}
    matcher = llguidance.LLMatcher(TOKENIZER, grammar, log_level=0)
    if matcher.is_error():
        return {"grammar_error": matcher.get_error(), "accept": [], "reject": []}

    def matches(text):
        matcher = llguidance.LLMatcher(TOKENIZER, grammar, log_level=0)
        consumed = matcher.consume_tokens(list(text.encode("utf-8")))
        return bool(consumed) and not matcher.is_error() and matcher.is_accepting()

    return {
        "grammar_error": None,
        "accept": [matches(text) for text in case["accept"]],
        "reject": [matches(text) for text in case["reject"]],
    }


def main():
    cases = json.load(sys.stdin)["cases"]
    json.dump(
        {
            "gbnf": [gbnf_oracle(case) for case in cases],
            "llguidance": [llguidance_oracle(case) for case in cases],
        },
        sys.stdout,
    )


main()
