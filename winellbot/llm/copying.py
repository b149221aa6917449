"""Greedy decoding held to an answer "After N: <words copied from a source>".

The local editor trained on copied answers (``answer: copied-span-1`` in the ``editor.json`` beside its adapter)
writes nothing of its own: after the prefix "After N:", every token it may choose continues a run of
the source's own tokens, and it may stop only at a word boundary, after a few words. A 135M model
left free invents words (most of the first adapter's new words were in neither the paragraph nor
the source: docs/results.md, "The shipped editor on the validation fold"); held to the source it
can only choose which words to take, which is the part it can learn from a few hundred examples.
What it takes still goes through every check and gate after it, like any model's text.

Both parts are held on token ids: the prefix to the tokens of "After 0:" .. "After 20:", the copy to
the source tokenized as it reads in the middle of a sentence (a leading space), which is how the
answer's tokens after "After N:" are tokenized in training.
"""
from __future__ import annotations

MIN_WORDS = 4   # the shortest run it may stop after
MAX_WORDS = 45  # the longest: a sentence, not the page
MAX_TOKENS = 72  # and tokens: a page without spaces has "words" of dozens of tokens
MAX_AFTER = 20  # "After 0:" .. "After 20:" (a number past the paragraph's end appends)


def prefixes(tokenizer) -> list[list[int]]:
    """The token ids of each "After N:" the editor may start with."""
    return [tokenizer(f"After {n}:", add_special_tokens=False)["input_ids"] for n in range(MAX_AFTER + 1)]


class CopyState:
    """Which source positions the copied tokens so far can continue from."""

    def __init__(self, tokenizer, source: str) -> None:
        self.ids = tokenizer(" " + " ".join(source.split()), add_special_tokens=False)["input_ids"]
        pieces = tokenizer.convert_ids_to_tokens(self.ids)
        # a word starts at a token that begins with a space (byte-level BPE: "Ġ"; sentencepiece: "▁")
        self.word_start = [p[:1] in ("Ġ", "▁", " ") for p in pieces]
        self.starts = [p for p in range(len(self.ids)) if self.word_start[p]]
        self.length = 0  # tokens copied
        self.words = 0

    def next_tokens(self) -> set[int]:
        return {self.ids[p + self.length] for p in self.starts if p + self.length < len(self.ids)}

    def may_stop(self) -> bool:
        if self.length == 0 or self.words < MIN_WORDS:
            return False
        return any(p + self.length == len(self.ids) or self.word_start[p + self.length] for p in self.starts)

    def take(self, token: int) -> None:
        self.starts = [p for p in self.starts if p + self.length < len(self.ids) and self.ids[p + self.length] == token]
        self.words += int(self.word_start[self.starts[0] + self.length]) if self.starts else 0
        self.length += 1

    def must_stop(self) -> bool:
        if self.length >= MAX_TOKENS:
            return True  # mid-word if need be: a cut reply would be asked again, whole
        return self.may_stop() and (self.words >= MAX_WORDS or not self.next_tokens())


def copy_generate(model, tokenizer, prompt_ids: list[int], source: str, max_new: int) -> tuple[list[int], str]:
    """Greedy ids of "After N: <copied words>" and the finish reason ("stop" or "length")."""
    import torch

    stops = {tokenizer.eos_token_id}
    stops |= {i for i in tokenizer("\n", add_special_tokens=False)["input_ids"]}
    starts = prefixes(tokenizer)
    out: list[int] = []
    state: CopyState | None = None
    past, step_ids = None, torch.tensor([prompt_ids], device=model.device)
    for _ in range(max_new):
        with torch.no_grad():
            result = model(input_ids=step_ids, past_key_values=past, use_cache=True)
        past, logits = result.past_key_values, result.logits[0, -1]
        if state is None:  # greedy along the prefixes that still fit
            allowed = list({p[len(out)] for p in starts if p[:len(out)] == out and len(p) > len(out)})
        else:
            allowed = list(state.next_tokens() | (stops if state.may_stop() else set()))
        if not allowed:
            return out, "stop"
        choice = allowed[int(torch.argmax(logits[allowed]))]
        if choice in stops:
            return out, "stop"
        out.append(choice)
        if state is None:
            if out in starts:
                state = CopyState(tokenizer, source)
        else:
            state.take(choice)
            if state.must_stop():
                return out, "stop"
        step_ids = torch.tensor([[choice]], device=model.device)
    return out, "length"


def choose_copy(model, tokenizer, prompt_ids: list[int], choices: tuple[str, ...]) -> tuple[list[int], str]:
    """Ids of "After N: <one of ``choices``>": the likeliest "After N:" (its tokens' summed
    log-probability), then the choice whose tokens the model finds likeliest after it (mean
    log-probability per token, so a longer run is not penalised for its length); the choices are
    runs of the source short-listed by :mod:`winellbot.editor.spans`. Nothing is generated freely,
    so no token limit applies."""
    import copy

    import torch

    with torch.no_grad():
        result = model(input_ids=torch.tensor([prompt_ids], device=model.device), use_cache=True)
        past, first = result.past_key_values, torch.log_softmax(result.logits[0, -1].float(), -1)

        def log_probs(ids: list[int]) -> list[float]:
            out = [float(first[ids[0]])]
            if len(ids) > 1:
                more = model(input_ids=torch.tensor([ids[:-1]], device=model.device),
                             past_key_values=copy.deepcopy(past), use_cache=True)
                logits = torch.log_softmax(more.logits[0].float(), -1)
                out += [float(logits[k - 1, ids[k]]) for k in range(1, len(ids))]
            return out

        prefix = max(prefixes(tokenizer), key=lambda p: sum(log_probs(p)))
        best, best_score = [], float("-inf")
        for choice in choices:
            ids = tokenizer(" " + " ".join(choice.split()), add_special_tokens=False)["input_ids"]
            if not ids:
                continue
            scores = log_probs(prefix + ids)[len(prefix):]
            score = sum(scores) / len(scores)
            if score > best_score:
                best, best_score = ids, score
    return prefix + best, "stop"
