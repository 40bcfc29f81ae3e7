"""A toolhost plugin in Python: a greeting from the operator's configuration
and word statistics over a folder the operator grants."""

import os
import re
from dataclasses import dataclass
from pathlib import Path

from toolhost_plugin import Output, Tool, declare, tool  # noqa: F401 (Tool is the export)

WORKSPACE = Path("/workspace")

# What this plugin asks for; the operator still has to grant it.
declare(env=["GREETING"], dirs=[str(WORKSPACE)])


@tool(read_only=True, idempotent=True)
def greet(name: str) -> str:
    """Greets someone with the greeting the operator configured (`GREETING`, default "Hello").

    Args:
        name: Who to greet.
    """
    if not name.strip():
        raise ValueError("`name` must not be empty")
    return f"{os.environ.get('GREETING', 'Hello')}, {name}!"


@dataclass
class Stats:
    """Word statistics of one file."""

    lines: int
    words: int
    top: list[str]


@tool(read_only=True, idempotent=True)
def word_stats(path: str, top: int = 3) -> Output[Stats]:
    """Counts the lines and words of a text file in the workspace and lists its most common words.

    Args:
        path: The file, relative to the workspace folder.
        top: How many of the most common words to list (1 to 20).
    """
    if not 1 <= top <= 20:
        raise ValueError("`top` must be between 1 and 20")
    text = (WORKSPACE / path).read_text(encoding="utf-8")
    words = re.findall(r"\w+", text.lower())
    counts: dict[str, int] = {}
    for w in words:
        counts[w] = counts.get(w, 0) + 1
    # Most common first; ties in order of first appearance (sorted is stable).
    common = sorted(counts, key=lambda w: -counts[w])[:top]
    stats = Stats(lines=len(text.splitlines()), words=len(words), top=common)
    summary = f"{path}: {stats.lines} lines, {stats.words} words; most common: {', '.join(common) or 'none'}"
    return Output(stats, text=summary)
